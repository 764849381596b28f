package main

import (
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/replay"
)

// profileDatasetFlags are AIPerf's dataset-side flags of the profile
// command (design 0027): synthetic prompt shaping, and a file's entries.
func profileDatasetFlags() []cli.Flag {
	const cat = "AIPerf"
	return []cli.Flag{
		&cli.IntFlag{Name: "synthesis-max-isl", Category: cat, Sources: cli.EnvVars("REPRISE_SYNTHESIS_MAX_ISL"),
			Usage: "leave out (counted) the rows of --input-file of more than `N` input tokens, as AIPerf's loader skips them (replay's --max-input-tokens N --skip-invalid)"},
		&cli.IntFlag{Name: "prompt-prefix-pool-size", Aliases: []string{"prefix-prompt-pool-size", "num-prefix-prompts"}, Category: cat, Sources: cli.EnvVars("REPRISE_PROMPT_PREFIX_POOL_SIZE"),
			Usage: "synthetic load: a pool of `N` prefixes of --prompt-prefix-length tokens; each conversation's first prompt starts with one drawn at random (seeded)"},
		&cli.IntFlag{Name: "prompt-prefix-length", Aliases: []string{"prefix-prompt-length"}, Category: cat, Sources: cli.EnvVars("REPRISE_PROMPT_PREFIX_LENGTH"),
			Usage: "synthetic load: `TOKENS` of each prefix of --prompt-prefix-pool-size"},
		&cli.IntFlag{Name: "num-dataset-entries", Aliases: []string{"num-prompts"}, Category: cat, Sources: cli.EnvVars("REPRISE_NUM_DATASET_ENTRIES"),
			Usage: "synthetic single-turn load: a pool of `N` distinct requests, the run's requests drawn from it by --dataset-sampling-strategy (shuffle by default, as AIPerf; sequential, random), so prompts repeat exactly; with --input-file, the file's first N entries (sessions or rows) are the dataset"},
		&cli.StringFlag{Name: "seq-dist", Aliases: []string{"sequence-distribution"}, Category: cat, Sources: cli.EnvVars("REPRISE_SEQ_DIST"),
			Usage: "synthetic load: AIPerf's mixture of lengths `ISL,OSL:PCT;…` (ISL|SD and OSL|SD add a standard deviation; also [(ISL,OSL):PCT,…] and {\"pairs\":[…]}); each request draws a pair, seeded by --random-seed"},
	}
}

// profileDataset maps the dataset-side flags onto o (after the rest of
// profileOptions).
func profileDataset(cmd flagmap.Values, o *reprise.Options, _ *replay.Config) error {
	// AIPerf sends a row without an output length as it is: the server
	// decides (no max_tokens, so no ignore_eos either).
	o.ServerOutputLength = true
	if cmd.IsSet("synthesis-max-isl") {
		if o.Trace.MaxInputTokens = cmd.Int("synthesis-max-isl"); o.Trace.MaxInputTokens < 1 {
			return fmt.Errorf("--synthesis-max-isl %d: want at least 1 token", o.Trace.MaxInputTokens)
		}
		o.Trace.SkipInvalid = true
	}
	if cmd.IsSet("num-dataset-entries") && cmd.Int("num-dataset-entries") < 1 {
		return fmt.Errorf("--num-dataset-entries %d: want at least 1", cmd.Int("num-dataset-entries"))
	}
	if !flagmap.FileDataset(o, cmd.Int("num-dataset-entries")) && cmd.IsSet("num-dataset-entries") {
		o.Synthetic.Entries = cmd.Int("num-dataset-entries")
		if !cmd.IsSet("dataset-sampling") {
			o.Trace.Sampling = "shuffle" // AIPerf's default for synthetic loads
		}
	}
	if pool, n := cmd.Int("prompt-prefix-pool-size"), cmd.Int("prompt-prefix-length"); pool > 0 || n > 0 {
		switch {
		case pool < 1 || n < 1:
			return fmt.Errorf("--prompt-prefix-pool-size %d and --prompt-prefix-length %d: give both, each at least 1", pool, n)
		case cmd.IsSet("shared-prefix-length") || cmd.IsSet("user-context-length") || cmd.IsSet("prefix-groups"):
			return fmt.Errorf("--prompt-prefix-pool-size and --prompt-prefix-length exclude --shared-system-prompt-length, --user-context-prompt-length and --prefix-groups (as in AIPerf)")
		}
		o.Synthetic.PrefixGroups, o.Synthetic.SharedPrefix, o.Synthetic.PrefixRandom = pool, n, true
	}
	if s := cmd.String("seq-dist"); s != "" {
		pairs, err := reprise.ParseSeqDist(s)
		if err != nil {
			return fmt.Errorf("--seq-dist: %w", err)
		}
		if cmd.IsSet("isl") || cmd.IsSet("osl") || cmd.IsSet("isl-stddev") || cmd.IsSet("osl-stddev") {
			return fmt.Errorf("--seq-dist gives the lengths: drop --isl, --osl and their standard deviations")
		}
		o.Synthetic.SeqDist = pairs
		o.Synthetic.ISL, o.Synthetic.OSL = reprise.SeqDistMeans(pairs)
	}
	return nil
}
