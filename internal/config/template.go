package config

// Template is the commented starting file `reprise config init` writes:
// a streaming chat profile of synthetic prompts against a local server,
// with the other common keys commented out. It parses under [AIPerf].
const Template = `# reprise profile config (format ` + Version + `, docs/format/config.md).
# Run it:   reprise profile -f profile.yaml      (flags given too override the file)
# Check it: reprise config validate profile.yaml
# Keys are aiperf profile's flag names, with dashes or underscores.

endpoint:
  model: Qwen/Qwen3-0.6B          # -m; a list sends to several models
  url: http://localhost:8000
  endpoint_type: chat             # chat, completions, embeddings, responses, …
  streaming: true                 # needed for TTFT and ITL
  # request_timeout_seconds: 600
  # api_key: ${API_KEY}           # values are taken as written (no expansion)

input:
  isl: 550                        # synthetic prompt tokens (mean)
  osl: 128                        # output tokens asked for
  # isl_stddev: 0
  # input_file: traces/mooncake-sample.jsonl
  # custom_dataset_type: mooncake_trace
  # public_dataset: sharegpt
  # random_seed: 42
  # extra_inputs: {temperature: 0, top_p: 1}
  # goodput: {time_to_first_token: 250, inter_token_latency: 10}

loadgen:
  concurrency: 8
  request_count: 100
  # request_rate: 10
  # benchmark_duration: 60
  # warmup_request_count: 10

tokenizer:
  tokenizer: builtin              # or a Hugging Face id, a tokenizer.json, server

output:
  artifact_dir: artifacts/qwen3-chat
  # export_level: records
  # slice_duration: 10

# multi_run:
#   num_profile_runs: 3
#   confidence_level: 0.95

# sweep:                          # one run per value (a grid of two lists)
#   type: grid
#   concurrency: [1, 8, 32]

# reprise:                        # reprise's own profile flags
#   max-error-rate: 0.05
`
