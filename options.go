package reprise

import (
	"io"
	"log/slog"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/internal/adaptive"
	"github.com/reprise-bench/reprise/internal/livemetrics"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/spool"
	"github.com/reprise-bench/reprise/internal/stability"
	"github.com/reprise-bench/reprise/internal/telemetry"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/synth"
	"github.com/reprise-bench/reprise/wasm"
)

// Defaults of [Options], as [NewOptions] sets them.
const (
	// DefaultURL is the server's base URL.
	DefaultURL = "http://localhost:8000"
	// DefaultEndpoint is the OpenAI chat completions API.
	DefaultEndpoint = "chat"
	// DefaultQueryTokens is the query length of a rankings endpoint.
	DefaultQueryTokens = 32
	// TokenizerServer as Options.Tokenizer learns the prompt words from
	// the server's own /tokenize (internal/servertok).
	TokenizerServer = "server"
	// DefaultTokenizer is the builtin tokenizer (o200k_base).
	DefaultTokenizer = "builtin"
	// DefaultUseServerTokenCount takes output lengths from the server's
	// usage where it reports it.
	DefaultUseServerTokenCount = true
	// DefaultMinGoodFraction is the fraction of requests that must meet
	// every goodput SLO.
	DefaultMinGoodFraction = 0.95
	// DefaultMaxErrorRate fails a run in which more than 5 % of the
	// measured requests failed. Latency statistics are computed over the
	// requests that succeeded; counting a failed request as one that never
	// ended, the p95 of all requests exists only while fewer than 5 %
	// failed, so above that the reported percentiles no longer describe
	// the load that was sent. A healthy server fails almost none; an
	// occasional timeout or 503 passes; a server that died mid-run fails.
	// An overload test that expects rejections loosens it.
	DefaultMaxErrorRate = 0.05
	// AutoCalibration, as Options.Calibration, applies the last
	// calibration of this host (written by `reprise selftest` to the user
	// cache directory) when it is less than a week old; none otherwise.
	AutoCalibration = "auto"
	// DefaultFormat is the record file format.
	DefaultFormat = "parquet"
	// DefaultExportLevel writes one record row per request.
	DefaultExportLevel = "records"
	// DefaultAdapterSandbox interrupts Wasm modules from files at their
	// deadline and trusts shipped ones.
	DefaultAdapterSandbox = "auto"
	// DefaultAdapterMemoryMiB caps the linear memory of all of a Wasm
	// adapter's instances together.
	DefaultAdapterMemoryMiB = wasm.DefaultMemoryBudget >> 20
	// DefaultStdinSpoolMiB caps the temporary copy of a trace read from a
	// reader.
	DefaultStdinSpoolMiB = spool.DefaultMax >> 20
	// DefaultMaxInputTokens is the longest trace row accepted, above any
	// model's context window.
	DefaultMaxInputTokens = trace.DefaultMaxInputTokens
	// DefaultHashMismatch stops before sending when a row's hash ids do
	// not fit its length.
	DefaultHashMismatch = string(prompt.DefaultMismatch)
	// DefaultPromptFormat sends synthesized prompts as text.
	DefaultPromptFormat = string(prompt.DefaultFormat)
	// DefaultContextMode grows the sessions whose rows hold only the new
	// turn, and sends the others as they are.
	DefaultContextMode = string(engine.DefaultContextMode)
	// DefaultMetricsInterval is how often server metrics are scraped and
	// GPUs sampled.
	DefaultMetricsInterval = telemetry.DefaultInterval
	// DefaultDCGMURL is where a DCGM exporter is scraped when no URL is
	// given.
	DefaultDCGMURL = telemetry.DefaultDCGMURL
	// DefaultMetricsLinger is how long a run's own metrics
	// (TelemetryOptions.MetricsAddr) are still served after the run when
	// no scrape comes.
	DefaultMetricsLinger = livemetrics.DefaultLinger
	// DefaultTimeout, DefaultMaxResponseEvents, DefaultMaxEventBytes and
	// DefaultMaxResponseBytes bound one request and its response.
	DefaultTimeout           = engine.DefaultTimeout
	DefaultMaxResponseEvents = engine.DefaultMaxResponseEvents
	DefaultMaxEventBytes     = engine.DefaultMaxEventBytes
	DefaultMaxResponseBytes  = engine.DefaultMaxResponseBytes
	// DefaultPartInterval and DefaultPartRows say how often a part of a
	// record table is completed (a JSON Lines file flushed).
	DefaultPartInterval = arrowio.DefaultPartInterval
	DefaultPartRows     = arrowio.DefaultPartRows
	// DefaultPreflightTimeout bounds the check of the servers before the
	// first request ([PreflightOptions]): long enough for a TLS handshake
	// across the world, short enough that a host that drops packets is
	// reported within seconds.
	DefaultPreflightTimeout = 5 * time.Second
	// DefaultAbortAfterConnectFailures stops a run whose first 10
	// requests to end all failed to connect: a server that is not there.
	// Ten rather than one, so that a connection refused by an overloaded
	// listen queue at the first burst does not end the run.
	DefaultAbortAfterConnectFailures = 10
)

// The URL policies of [Options.URLPolicy]: how requests are spread over
// the targets when there are several.
const (
	// URLPolicyRoundRobin sends request i to target i mod n (one logical
	// server behind several endpoints).
	URLPolicyRoundRobin = "round-robin"
	// URLPolicyLeastInFlight sends each request to the target with the
	// fewest requests in flight (ties: the lowest index).
	URLPolicyLeastInFlight = "least-in-flight"
	// URLPolicyFanOut sends every request to every target at the same
	// intended instant: an A/B of servers under identical load.
	URLPolicyFanOut = "fan-out"
	// URLPolicyRandom sends each row (every turn of a session alike) to a
	// target drawn uniformly from Replay.Seed and the row's index: AIPerf's
	// random model selection ([WithModels]).
	URLPolicyRandom = "random"
	// DefaultURLPolicy is round-robin.
	DefaultURLPolicy = URLPolicyRoundRobin
)

// The live views of [Options.UI].
const (
	// UILine is the progress line: one line, redrawn in place.
	UILine = "line"
	// UIDashboard is the full-screen dashboard (docs/design/0018-dashboard.md).
	UIDashboard = "dashboard"
)

// Target is a further server a replay sends to, beside Options.URL
// (target 0); see [Options.Targets].
type Target struct {
	// URL is the target's base URL, as Options.URL.
	URL string
	// Model is the model name sent to it; "" sends Options.Model.
	Model string
	// Headers are added to Options.Headers for this target, each
	// "NAME: VALUE".
	Headers []string
}

// Options configure one replay: where requests go and what they ask, the
// load (a trace or a synthetic one) and its timing, the verdicts, the run
// directory and telemetry. Start from [NewOptions], which sets the
// documented defaults; several fields (Streaming, IgnoreEOS,
// MaxTokensFromTrace) default to true, so the zero value is not a useful
// configuration. [Run] validates the options and never changes them.
type Options struct {
	// URL is the server's base URL (http:// or https://); the endpoint
	// path is appended. User info in it is sent as HTTP Basic
	// authorization and never written to a file. It is target 0.
	URL string
	// Targets are further servers, targets 1, 2, …; URLPolicy says how
	// requests are spread over all of them. Records carry their target's
	// index (records.target) and the summary reports each target.
	Targets []Target
	// URLPolicy is URLPolicyRoundRobin, URLPolicyLeastInFlight or
	// URLPolicyFanOut; it matters only with Targets.
	URLPolicy string
	// Model is the model name put in every request (required).
	Model string
	// Endpoint is the API: a native endpoint's name ("chat",
	// "completions", "responses", ...: native.List), a Wasm adapter file
	// or a shipped Wasm adapter's name. "" is the endpoint a recorded
	// trace's first row names (Mooncake endpoint), else DefaultEndpoint.
	Endpoint string
	// Adapter configures a Wasm Endpoint.
	Adapter AdapterOptions

	// Streaming asks for streamed (SSE) responses.
	Streaming bool
	// IgnoreEOS asks the server to generate exactly max_tokens.
	IgnoreEOS bool
	// MinTokens also sends min_tokens equal to max_tokens (SGLang's
	// generate endpoint: min_new_tokens), GenAI-Perf's
	// --output-tokens-mean-deterministic.
	MinTokens bool
	// MaxTokensFromTrace sends each row's output length as max_tokens.
	MaxTokensFromTrace bool
	// ServerOutputLength keeps a trace row without an output length
	// (when Synthetic.OSL gives none) instead of refusing it, as AIPerf
	// does: it is sent with no max_tokens and, then, no ignore_eos, so
	// the server decides when it ends (bounded by MaxResponseEvents,
	// MaxResponseBytes and Timeout). Start.ServerOutputRows and the
	// manifest's server_output_rows count such rows.
	ServerOutputLength bool
	// PrimePrefixes sends, before the measured requests, one request per
	// distinct shared prefix of the trace's hash ids (its full blocks, one
	// output token), as warmup records, and waits for them: the measured
	// requests find the prefixes cached instead of racing to fill the
	// cache, and the expected cached tokens count the primed blocks. It
	// reads the trace whole.
	PrimePrefixes bool
	// ExtraBody is a JSON object merged into every request body.
	ExtraBody string
	// Headers are extra request headers, each "NAME: VALUE".
	Headers []string
	// APIKey is sent as a bearer token; it is never written to a file.
	APIKey string
	// Timeout ends a request after this long (recorded as timeout).
	Timeout time.Duration
	// MaxResponseEvents, MaxEventBytes and MaxResponseBytes end a
	// response that passes them as too_large (0 = no cap).
	MaxResponseEvents int
	MaxEventBytes     int
	MaxResponseBytes  int64
	// HTTP2 speaks HTTP/2 (h2c prior knowledge for http://) instead of
	// HTTP/1.1.
	HTTP2 bool
	// NoKernelTimestamps stamps response bytes when they are read rather
	// than when the kernel received them.
	NoKernelTimestamps bool
	// MaxConnections caps the connections to the server (0 = one per
	// request in flight).
	MaxConnections int
	// ConnReuse says which requests share a connection (HTTP/1.1), by
	// engine.ConnReuse's name: pooled ("" too), never (a connection per
	// request) or sticky-user-sessions (one per session).
	ConnReuse string
	// NetworkLatency subtracts the network round trip from the latencies
	// that start at the send (the summary's network_adjusted_*).
	NetworkLatency NetworkLatencyOptions
	// Nice, when not nil, is the nice value the process's threads run at.
	Nice *int
	// Preflight says how the servers are checked before the first
	// request.
	Preflight PreflightOptions
	// Server says what is asked of the servers besides the load: wait
	// for the model, reset the prefix cache, run the profiler.
	Server ServerControlOptions
	// AbortAfterConnectFailures stops a run whose first N requests to
	// end all failed to connect (record.ErrConnect), before any request
	// got an answer: in-flight requests get Replay.Grace, what was
	// recorded is written, run_info.stopped in summary.json says why, and
	// [Run] returns the Result with an [*UnreachableError]. A request that
	// got any answer, even an error status, disarms the check for the
	// rest of the run. 0 never stops.
	AbortAfterConnectFailures int
	// FailedRequestThreshold, when not nil, aborts the run once more than
	// this fraction (0 to 1) of its measured requests that ended had
	// failed, checked once max(Replay.Concurrency, 10) of them had ended
	// (AIPerf's --failed-request-threshold and its floor): no new requests, in-flight
	// ones get Replay.Grace, what was recorded is written,
	// run_info.stopped in summary.json says why, and [Run] returns the
	// Result with a [*FailedRequestsError]. Warmup requests do not count.
	// nil never aborts; 0 aborts at the first failure past the floor.
	FailedRequestThreshold *float64
	// BatchSize is the number of inputs per request of an embeddings
	// endpoint, or of passages per request of a rankings endpoint (each of
	// the row's input length); 1 for a generation endpoint.
	BatchSize int
	// QueryTokens is the length of a rankings endpoint's query in tokens.
	QueryTokens int
	// Rankings varies the requests of a rankings endpoint; the zero value
	// keeps BatchSize passages of the row's length and QueryTokens.
	Rankings RankingsVariation
	// Generation configures the image, video and speech endpoints
	// (generation.go).
	Generation GenerationOptions

	// SessionHeader names a request header that carries the trace row's
	// session id (router affinity: Dynamo, llm-d, SGLang router); "" =
	// none. Rows without a session id send none. A row's own "headers"
	// object is sent in every case.
	SessionHeader string

	// CancelRate is the fraction (0 to 1) of measured requests that are
	// cancelled CancelAfter after they were written whole, unless their
	// response ended first (AIPerf's request cancellation). Which
	// requests is drawn from Replay.Seed and the request id. Such a
	// request is recorded as error kind cancelled with its
	// cancel_after_ns and counted apart in the summary
	// (CancelledRequestCount), outside the latency metrics and the error
	// rate. 0 = none.
	CancelRate float64
	// CancelAfter is the delay of a planned cancellation (with
	// CancelRate; 0 cancels as soon as the request was written).
	CancelAfter time.Duration

	// Tokenizer is the client tokenizer's spec: "builtin", an encoding
	// name, a tokenizer.json, a GGUF model file, a model directory, a
	// Hugging Face model id (ORG/NAME: from the local cache, else
	// downloaded from the Hub as huggingface_hub does, see
	// docs/format/cli.md), or TokenizerServer: the words prompts are
	// made of are learned from the server's /tokenize before the run
	// (cached per server and model), other text is counted with the
	// builtin tokenizer. It builds prompts and counts output tokens.
	Tokenizer string
	// TokenizerRevision is the branch, tag or commit of a Tokenizer that
	// is a Hugging Face model id ("" is main).
	TokenizerRevision string
	// TokenizerFromModel takes the tokenizer from Model when it is a
	// Hugging Face model id (ORG/NAME), as AIPerf does when no tokenizer
	// is named: from the local cache or downloaded from the Hub. A Model
	// that is no model id, or whose tokenizer cannot be had (offline,
	// gated, no tokenizer.json), leaves Tokenizer in use, with a warning.
	TokenizerFromModel bool
	// UseServerTokenCount takes output lengths (OSL, ITL) from the
	// server's usage where it reports it; false counts with the client
	// tokenizer (both counts are recorded).
	UseServerTokenCount bool

	// Synthetic is the load sent without a trace; with a trace, its OSL
	// is the output length of rows that have none.
	Synthetic SyntheticLoad
	// Media are the synthetic images, audio clips and videos sent with
	// every request, and the caps on a trace's own (design 0022).
	Media MediaOptions
	// Prompts says how prompts are synthesized.
	Prompts PromptOptions
	// Trace is the trace to replay; none (a zero Path and Reader) runs
	// the synthetic load.
	Trace TraceOptions
	// Replay is the timing: schedule, rate or concurrency, limits,
	// warmup, lateness.
	Replay replay.Config
	// Adaptive, when not nil, moves the closed loop's concurrency during
	// the run to the highest setting that meets its SLAs (AIPerf's
	// --adaptive-scale; see [AdaptiveOptions]).
	Adaptive *AdaptiveOptions
	// Stability, when not nil, stops the run once its windows agree
	// (GenAI-Perf's --measurement-interval and --stability-percentage;
	// see [StabilityOptions]).
	Stability *StabilityOptions
	// Accuracy grades answers to benchmark questions, alone or mixed
	// into the load (docs/design/0021-accuracy.md).
	Accuracy AccuracyOptions

	// Warmup is a warmup phase at its own load before the run; the zero
	// value has none.
	Warmup WarmupLoad

	// Goodput lists SLOs, "TAG:VALUE …" in ms, e.g. "ttft:250 itl:10".
	Goodput string
	// MinGoodFraction is the fraction of requests that must meet every
	// SLO of Goodput.
	MinGoodFraction float64
	// MaxErrorRate is the largest fraction of measured requests that may
	// fail (1 = any).
	MaxErrorRate float64
	// Calibration is the machine calibration (`reprise selftest`) the
	// run applies: a calibration file's path, [AutoCalibration] for this
	// host's own when it is recent (selftest/calibration.MaxAge), or ""
	// for none. With one, the summary carries the calibrated errors and
	// judges the run's load against the safe load (summary.Quality).
	Calibration string

	// Output says where and how the run directory is written.
	Output OutputOptions
	// Telemetry says what server metrics and GPU samples are collected.
	Telemetry TelemetryOptions
	// Profile names files for Go profiles of the run.
	Profile ProfileOptions

	// Progress, when not nil, receives the progress line while the run
	// goes (redrawn in place when it is a terminal), or the dashboard (UI).
	Progress io.Writer
	// ProgressInterval is how often the progress line is printed (or
	// redrawn on a terminal); 0 = every 5 s, or every 250 ms on a terminal.
	ProgressInterval time.Duration
	// UI is the live view on Progress: [UILine] (or "") the progress line;
	// [UIDashboard] the full-screen dashboard when Progress is a terminal
	// and TERM is not "dumb", the progress line otherwise. The dashboard
	// reads its keys from the controlling terminal (/dev/tty): q or Ctrl-C
	// stops sending, a second press cancels the requests in flight (as a
	// first and a second cancellation of Run's context and Abort do); p
	// pauses the view.
	UI string
	// Log receives the run's log records; nil discards them.
	Log *slog.Logger
	// Abort, when closed, stops the run at once: in-flight requests are
	// cancelled without waiting for Replay.Grace, the final telemetry
	// scrape and the AIPerf export are skipped. Cancelling Run's context
	// stops it gracefully.
	Abort <-chan struct{}
	// OnStart, when not nil, is called once the run directory exists,
	// before the first request, with what the run is about to do.
	OnStart func(Start)
	// OnEnd, when not nil, is called once when the last request has
	// ended (or been cancelled), before the records are closed and the
	// summary written: with OnStart, it brackets the time requests were
	// on the wire (reprise selftest measures the client's CPU between the
	// two).
	OnEnd func()
}

// PreflightOptions say how [Run] checks the servers before it creates the
// run directory: for the URL and every further target, a TCP connection
// (with the TLS handshake for https://) and a GET of /v1/models on it,
// with the request headers. Any HTTP answer passes, a 404 from a server
// without /v1/models too; a 200 model list that does not name the model
// sent to that target is logged as a warning. No answer within Timeout,
// for all targets together, fails the run with an [*UnreachableError]
// before anything is sent or created.
type PreflightOptions struct {
	// Skip sends the first request without checking the servers.
	Skip bool
	// Timeout bounds the whole check (0 = [DefaultPreflightTimeout]).
	Timeout time.Duration
}

// AdapterOptions configure the endpoint adapter.
type AdapterOptions struct {
	// Config is JSON handed to a Wasm adapter's rp_configure as
	// "options"; for a native endpoint, a JSON object of strings
	// (adapter.Config.Options).
	Config string
	// SHA256 pins the module: a different one fails to load.
	SHA256 string
	// Sandbox is "auto", "always" or "never": which modules are
	// interrupted at their deadline.
	Sandbox string
	// MemoryMiB caps the linear memory of all instances together.
	MemoryMiB int
}

// RankingsVariation varies the requests of a rankings endpoint as
// AIPerf's --rankings-*-stddev flags do: each request draws its passage
// count (mean [Options.BatchSize]), each passage's length in tokens (mean
// the row's input length) and its query's length (mean
// [Options.QueryTokens]) from a normal with these standard deviations,
// truncated at 0, rounded up and at least 1. The draws are keyed by the
// request's seed ([ReplayOptions.Seed]): equal seeds send equal requests.
// The zero value draws nothing.
type RankingsVariation struct {
	// PassagesStdDev is the standard deviation of the passage count.
	PassagesStdDev float64
	// PassageTokensStdDev is that of each passage's length, in tokens.
	PassageTokensStdDev float64
	// QueryTokensStdDev is that of the query's length, in tokens.
	QueryTokensStdDev float64
}

// SyntheticLoad is a load without a trace: normally distributed input and
// output lengths, in tokens; optionally multi-turn sessions and prefixes
// shared across requests (then the load is generated as rows with hash ids
// before the run, so expected cached tokens are known for every request).
// An embeddings or rankings endpoint needs ISL only: it has no output.
type SyntheticLoad struct {
	ISL, ISLStdDev float64
	OSL, OSLStdDev float64

	// Sessions is the number of conversations (0: as many as the request
	// count needs). Each has TurnsMean ± TurnsStdDev turns (normal, at
	// least 1; 0 means 1); a later turn is sent TurnDelay ±
	// TurnDelayStdDev after the previous one completed, with the earlier
	// prompts and the live responses in its history.
	Sessions                   int
	TurnsMean, TurnsStdDev     float64
	TurnDelay, TurnDelayStdDev time.Duration
	// SharedPrefix is the length in tokens of a prefix shared by every
	// session's first prompt (AIPerf's shared system prompt), or by the
	// sessions of one group when PrefixGroups > 1 (SGLang's
	// generated-shared-prefix: groups × prompts per group × prefix
	// length). PrefixGroups 0 means 1.
	SharedPrefix int
	PrefixGroups int
	// UserContext is the length in tokens of a prefix of each session's
	// own (AIPerf's user context prompt), after the shared one.
	UserContext int
	// SeqDist, when not empty, is AIPerf's mixture of lengths
	// (--seq-dist, [ParseSeqDist]): each request draws a pair by its
	// probability and its lengths around the pair's means, instead of
	// ISL ± ISLStdDev and OSL ± OSLStdDev (which should then be the
	// mixture's means, [SeqDistMeans]). The load is generated as rows
	// before the run, seeded by Replay.Seed.
	SeqDist []SeqDistPair
	// Entries, when > 0, is AIPerf's --num-dataset-entries: the load is
	// a pool of Entries distinct requests (generated as above), and the
	// run sends requests drawn from it in the Trace.Sampling order
	// (sequential cycles through it; AIPerf's default for synthetic
	// loads, shuffle, a new permutation each pass; random with
	// replacement), so a request's prompt repeats exactly. Single-turn
	// loads only.
	Entries int
	// PrefixRandom gives each session a group's prefix drawn at random
	// (seeded) instead of round-robin: AIPerf's prefix pool
	// (--prompt-prefix-pool-size PrefixGroups, --prompt-prefix-length
	// SharedPrefix), one prefix of the pool per conversation.
	PrefixRandom bool
}

// MediaOptions describe the synthetic media of every request, in AIPerf's
// terms, and cap the media a trace's rows carry (design 0022). The zero
// value sends none and takes the default caps. Media go with chat and
// Responses requests, after the prompt text, as OpenAI content parts.
type MediaOptions struct {
	// Images per request (--batch-size-image), each ImageWidthMean ±
	// ImageWidthStdDev by ImageHeightMean ± ImageHeightStdDev pixels, in
	// ImageFormat ("png", "jpeg" or "random"; default png). ImageReuse
	// sends the same images in every request (a server's encoder cache
	// can then hit). Images are sent when the batch size and both means
	// are set.
	Images                             int
	ImageWidthMean, ImageWidthStdDev   float64
	ImageHeightMean, ImageHeightStdDev float64
	ImageFormat                        string
	ImageReuse                         bool
	// Audios per request (--batch-size-audio), AudioLengthMean ±
	// AudioLengthStdDev seconds each, in AudioFormat ("wav", "mp3" through
	// ffmpeg, or "random"; default wav), at a rate from AudioSampleRates
	// (kHz; default 16) and a depth from AudioDepths (bits; default 16),
	// AudioChannels channels (default 1).
	Audios                             int
	AudioLengthMean, AudioLengthStdDev float64
	AudioFormat                        string
	AudioSampleRates                   []float64
	AudioDepths                        []int
	AudioChannels                      int
	// Videos per request (--batch-size-video), made with ffmpeg:
	// VideoDuration seconds at VideoFPS (default 4), VideoWidth ×
	// VideoHeight (default 640 × 480), from the VideoSynthType lavfi
	// source (default testsrc2), in VideoFormat (mp4 or webm) with
	// VideoCodec.
	Videos                                  int
	VideoDuration                           float64
	VideoFPS, VideoWidth, VideoHeight       int
	VideoSynthType, VideoFormat, VideoCodec string
	// VideoAudioChannels (0: none, the default; 1 or 2) mux an audio
	// track of the video's length into each video, at
	// VideoAudioSampleRate (Hz, or kHz below 1000; default 44100) and
	// VideoAudioDepth bits (default 16), encoded with VideoAudioCodec
	// ("aac", "libvorbis" or "libopus"; default aac in mp4, libvorbis
	// in webm); AIPerf's --video-audio-*.
	VideoAudioChannels   int
	VideoAudioSampleRate float64
	VideoAudioDepth      int
	VideoAudioCodec      string
	// MaxImagePixels caps width × height of a trace's image, read from
	// its header before decoding (0: 8192 × 8192); MaxMediaBytes caps one
	// item's bytes (0: 64 MiB).
	MaxImagePixels int64
	MaxMediaBytes  int64
	// ImageSource is a directory of PNG, JPEG and GIF files: each
	// synthetic image is one of them, picked at random (seeded;
	// ImageSourceSampling "random", the only mode), resized to the drawn
	// size, or at its own size when the means are 0 (AIPerf's
	// --image-source).
	ImageSource, ImageSourceSampling string
}

// PromptOptions say how prompts are synthesized and sessions grown.
type PromptOptions struct {
	// Seed seeds the prompt words: equal seeds build equal prompts.
	Seed uint64
	// HashMismatch is "error" or "fit": what is done with rows whose
	// hash ids do not fit their length.
	HashMismatch string
	// ISLCorrection is subtracted from every synthesized prompt's length
	// (what the server's chat template adds).
	ISLCorrection int
	// ApplyChatTemplate (AIPerf's --apply-chat-template) makes input
	// lengths count the prompt after the model's chat template: the
	// template's tokens, measured by rendering the tokenizer's template
	// (tokenizer_config.json or chat_template.jinja next to its
	// tokenizer.json, or a GGUF file's; with TokenizerServer, what the
	// server says it adds), are taken off every synthesized prompt, and
	// a prompt the template changes at its edges is rebuilt, so the
	// server's usage.prompt_tokens is the asked length. Exclusive with
	// ISLCorrection; chat endpoint only.
	ApplyChatTemplate bool
	// Format is "text" or "token-ids".
	Format string
	// ContextMode is "auto", "history" or "self-contained": how the turns
	// of multi-turn sessions are sent.
	ContextMode string
	// SharedSystemTokens and UserContextTokens, with a trace whose rows
	// carry their own text (AIPerf single_turn and multi_turn files,
	// prompt files, ShareGPT), put AIPerf's conversation prompts before
	// every request's messages, as AIPerf does for synthetic data: a
	// system message of SharedSystemTokens tokens, the same in every
	// conversation, then a user message of UserContextTokens tokens, each
	// conversation's own (a session, or a row without one), then the
	// turns with their history. The texts are synthesized words (Seed);
	// chat and Responses endpoints only. 0 sends none. A synthetic load's
	// shared prefixes are Synthetic.SharedPrefix and Synthetic.UserContext.
	SharedSystemTokens, UserContextTokens int
	// Corpus is "" (the tokenizer's own word list) or the corpus
	// synthesized prompts are made of, AIPerf's --prompt-corpus: "sonnet"
	// (Shakespeare's sonnets) or "coding" (Go source code); its words
	// that are one token each, in its order, so lengths and shared
	// prefixes stay exact ([prompt.CorpusWords]).
	Corpus string
	// CacheBust is AIPerf's --cache-bust: "" or "none" (off), or a
	// target (system_prefix, system_suffix, first_turn_prefix,
	// first_turn_suffix). With a target, the run's synthesized words are
	// drawn with Seed mixed with a random salt of this run, so no prompt
	// shares a token block with an earlier run's (the server's cache
	// cannot serve it); sharing within the run (hash ids, shared and
	// pooled prefixes) stays as the trace or the options say. AIPerf
	// inserts a marker per conversation at the target instead, which also
	// breaks sharing between conversations and changes the lengths; here
	// the lengths stay exact. Rows with their own text are sent as they
	// are.
	CacheBust string
}

// TraceOptions name the trace and say how it is read.
type TraceOptions struct {
	// Path is the trace file. With Reader set, it only names the trace
	// in messages and files ("-" when empty).
	Path string
	// Reader, when not nil, is read instead of a file, through a
	// temporary copy of at most SpoolMiB MiB.
	Reader io.Reader
	// Format is the trace format; empty detects it.
	Format string
	// BlockSize is the tokens per hash id (0 = the format's default).
	BlockSize int
	// MaxInputTokens refuses rows with more input tokens.
	MaxInputTokens int
	// SpoolMiB caps the temporary copy of Reader.
	SpoolMiB int
	// SkipInvalid skips (and counts) invalid rows instead of stopping.
	SkipInvalid bool
	// DropFailed drops rows the trace marks as failed.
	DropFailed bool
	// ModelFilter keeps only the rows of this trace model.
	ModelFilter string
	// Hold reads the whole trace into memory even when it could be read
	// while the run goes (the manifest's trace_streamed says which).
	Hold bool

	// Columns name the columns of a table dataset (JSON Lines, CSV or
	// Parquet with a prompt column); naming one reads the file as a table.
	Columns trace.Columns
	// PublicDataset is AIPerf's --public-dataset: a dataset named by
	// AIPerf that reprise downloads from the Hugging Face Hub into the
	// Hugging Face cache (HF_* environment, as for a model id tokenizer)
	// and reads as the trace: "sharegpt" (ShareGPT_V3_unfiltered_cleaned_split.json,
	// format sharegpt, AllTurns), or one of AIPerf's text datasets read
	// from the Hub's Parquet conversion ([PublicDatasetNames]; design
	// 0028), whose prompts are written once to a JSON Lines table in the
	// user's cache folder (reprise/hf-datasets) and read from there.
	// Exclusive with Path and Reader.
	PublicDataset string
	// PublicSubset is AIPerf's --hf-subset: the config (subset) of the
	// Hub dataset PublicDataset names, instead of AIPerf's; an unknown one
	// is an error listing the dataset's subsets.
	PublicSubset string
	// PublicFilters are AIPerf's --dataset-filter KEY=VALUE: only the
	// rows of PublicDataset whose column KEY, written as text (numbers in
	// decimal, booleans true/false), equals VALUE are sent; all must hold.
	// An unknown KEY is an error listing the dataset's columns.
	PublicFilters []string
	// AllTurns sends every human→gpt pair of a ShareGPT conversation as a
	// turn of one session (with the live responses in its history); false
	// sends its first pair only.
	AllTurns bool
	// Sampling is the order the load modes send a dataset's rows in:
	// "sequential" (or ""), "shuffle" or "random" (with replacement),
	// drawn with Replay.Seed. Anything but sequential holds the rows.
	Sampling string
	// Entries, when > 0, is AIPerf's --num-dataset-entries with a file:
	// the dataset is the file's first Entries entries (a session with its
	// turns, or a row without one), as AIPerf's loaders cap it; the run
	// draws from those only. Holds the rows.
	Entries int
	// Sessions, when > 0, is AIPerf's --num-sessions with a file: the run
	// sends exactly Sessions entries of the dataset (each session whole),
	// drawn in the Sampling order: sequential cycles through the file,
	// shuffle takes a new permutation each pass, random draws with
	// replacement; an entry drawn again is a new conversation (its
	// session id gets "#k"). Replay.RequestCount, when also given, stops
	// the run earlier. Not with a fixed schedule. Holds the rows.
	Sessions int
	// Synthesis, when not nil, reshapes the trace's rows before the run
	// as AIPerf's --synthesis-* options do, in memory ([synth.Reshape]:
	// the prefix, prompt and output multipliers, the root multiplier, an
	// output cap; MaxISL is MaxInputTokens with SkipInvalid here). The
	// trace is then held whole. Its Speedup, Window, Sample and Format are
	// not used (Replay.Speedup is the run's); Seed seeds the root
	// multiplier's draw.
	Synthesis *synth.DeriveConfig
}

// OutputOptions say where and how the run directory is written.
type OutputOptions struct {
	// Dir is the run directory. It must be new or empty unless Overwrite.
	// Empty creates runs/<UTC time>-<model>-<mode>/.
	Dir string
	// Overwrite clears an earlier run's files from a non-empty Dir.
	Overwrite bool
	// Format is "parquet", "arrow" or "jsonl".
	Format string
	// SingleFile writes one file per table instead of rolling parts.
	SingleFile bool
	// PartInterval and PartRows say how often a part is completed (0
	// interval: by rows only).
	PartInterval time.Duration
	PartRows     int
	// ExportLevel is "records" or "events" (also one row per response
	// event).
	ExportLevel string
	// Export is "" or "aiperf" (AIPerf's export files after the run).
	Export string
	// ExportPrefix, when not "", names AIPerf's export files PREFIX.jsonl,
	// PREFIX.json and PREFIX.csv instead of profile_export.jsonl,
	// profile_export_aiperf.json and .csv (AIPerf's
	// --profile-export-prefix). A plain file name: no path separator.
	ExportPrefix string
	// SliceDuration, when > 0, also summarizes the measured requests per
	// slice of this width by send time: summary.json's time_slices and,
	// with Export aiperf, AIPerf's profile_export_aiperf_timeslices.json
	// and .csv (AIPerf's --slice-duration).
	SliceDuration time.Duration
	// ServerMetricsFormats, with Export aiperf and server metrics
	// scraped, are AIPerf's server_metrics_export files written after the
	// run (AIPerf's --server-metrics-formats): "json" and "csv" (the
	// statistics of every series over the profile window), "jsonl" (every
	// scrape) and "parquet" (every sample, counters and histograms as
	// increases). None: none written.
	ServerMetricsFormats []string
	// ExportOutputs also writes outputs.json: every request's response
	// text with AIPerf's per-request metadata and metrics (AIPerf's
	// --export-outputs-json). Opt-in: the texts are what the server said.
	ExportOutputs bool
	// HTTPTiming adds the HTTP timing metrics to the summary
	// (http_req_dns_lookup, _sending, _receiving, _duration) and the
	// HTTP timing table after the run (AIPerf's --show-trace-timing);
	// HTTPTrace adds each request's HTTP timestamps and phases to
	// AIPerf's profile_export.jsonl as trace_data (--export-http-trace).
	HTTPTiming bool
	HTTPTrace  bool
}

// TelemetryOptions say what is collected beside the records.
type TelemetryOptions struct {
	// EndpointMetrics scrapes the server's /metrics (same scheme and host
	// as URL).
	EndpointMetrics bool
	// ServerMetrics are further Prometheus pages to scrape.
	ServerMetrics []string
	// Interval is how often pages are scraped and GPUs sampled.
	Interval time.Duration
	// GPU is "" (none), "dcgm" (a DCGM exporter at DCGMURL) or "nvml".
	GPU     string
	DCGMURL string
	// MetricsAddr, when not empty, serves the run's own metrics at
	// http://MetricsAddr/metrics while it runs, in Prometheus's
	// exposition format (docs/format/live-metrics.md): HOST:PORT, an
	// empty host being every interface.
	MetricsAddr string
	// MetricsLinger is how long the metrics are still served after the
	// run when no scrape comes: the first scrape begun after the end
	// (which reads the final values) ends the wait at once. 0 stops
	// serving at the end.
	MetricsLinger time.Duration
	// OTLP, when its URL is set, pushes the same metrics to an
	// OpenTelemetry collector (AIPerf's --otel-url).
	OTLP OTLPOptions
	// MLflow, when its TrackingURI is set, logs the finished run to an
	// MLflow tracking server (AIPerf's --mlflow-*).
	MLflow MLflowOptions
}

// ProfileOptions name files for Go profiles (empty: none).
type ProfileOptions struct {
	// CPU is written while requests are sent.
	CPU string
	// Heap is written at the end of the run, before the summary.
	Heap string
}

// NewOptions returns Options with the documented defaults: the Default
// constants, streamed responses, ignore_eos, max_tokens from the trace,
// the endpoint's /metrics scraped, and [replay.NewConfig] timing.
func NewOptions() Options {
	return Options{
		URL: DefaultURL, Endpoint: DefaultEndpoint, URLPolicy: DefaultURLPolicy, BatchSize: 1, QueryTokens: DefaultQueryTokens,
		Generation: GenerationOptions{JobPollInterval: DefaultJobPollInterval, JobTimeout: DefaultJobTimeout, TranscribeSeconds: DefaultTranscribeSeconds},
		Adapter:    AdapterOptions{Sandbox: DefaultAdapterSandbox, MemoryMiB: DefaultAdapterMemoryMiB},
		Streaming:  true, IgnoreEOS: true, MaxTokensFromTrace: true,
		Timeout:                   DefaultTimeout,
		Preflight:                 PreflightOptions{Timeout: DefaultPreflightTimeout},
		AbortAfterConnectFailures: DefaultAbortAfterConnectFailures,
		MaxResponseEvents:         DefaultMaxResponseEvents, MaxEventBytes: DefaultMaxEventBytes, MaxResponseBytes: DefaultMaxResponseBytes,
		Tokenizer:       DefaultTokenizer,
		Prompts:         PromptOptions{HashMismatch: DefaultHashMismatch, Format: DefaultPromptFormat, ContextMode: DefaultContextMode},
		Trace:           TraceOptions{MaxInputTokens: DefaultMaxInputTokens, SpoolMiB: DefaultStdinSpoolMiB},
		Replay:          replay.NewConfig(),
		MinGoodFraction: DefaultMinGoodFraction, MaxErrorRate: DefaultMaxErrorRate,
		Output: OutputOptions{Format: DefaultFormat, PartInterval: DefaultPartInterval, PartRows: DefaultPartRows,
			ExportLevel: DefaultExportLevel},
		Telemetry: TelemetryOptions{EndpointMetrics: true, Interval: DefaultMetricsInterval, MetricsLinger: DefaultMetricsLinger},
	}
}

// StabilityOptions is the stability stop of one run (GenAI-Perf's and
// perf_analyzer's): the measured requests are counted in windows of
// Interval from the run's start, and the run stops as its duration would
// once the last three windows agree within Percentage percent (their
// throughput and mean end-to-end latency each: max / min ≤ 1 +
// Percentage/100), or after MaxWindows windows. summary.json's
// run_info.stability lists the windows and whether they agreed. A run
// that nothing else bounds (no Replay.Duration or RequestCount) goes on
// until the watch stops it. It excludes Adaptive. Build it with
// [NewStabilityOptions].
type StabilityOptions struct {
	Interval   time.Duration
	Percentage float64
	MaxWindows int
}

// DefaultStabilityInterval is GenAI-Perf's --measurement-interval (10 s).
const DefaultStabilityInterval = 10 * time.Second

// NewStabilityOptions returns GenAI-Perf's defaults: windows of 10 s,
// 999 % (any three windows agree) and perf_analyzer's 10 windows at most.
func NewStabilityOptions() StabilityOptions {
	return StabilityOptions{Interval: DefaultStabilityInterval, Percentage: stability.DefaultPercentage, MaxWindows: stability.DefaultMaxWindows}
}

// AdaptiveOptions is a single-run adaptive scaling of the closed-loop
// concurrency (AIPerf's --adaptive-scale; docs/design/0032): the run
// starts at Min and, after each Period, doubles the concurrency while
// every SLA holds, then bisects to the highest setting that held below
// the lowest that failed, and holds it for Sustain. Max is the ceiling
// (0: Options.Replay.Concurrency). SLAs are "METRIC:STAT:OP:THRESHOLD"
// ("request_latency:p95:le:30000", latencies in ms); a window of fewer
// than MinCompleted completed requests decides nothing. The run needs
// Options.Replay.Duration and writes adaptive_scale_events.jsonl and
// adaptive_scale_summary.json (docs/format/adaptive-scale.md). Build it
// with [NewAdaptiveOptions].
type AdaptiveOptions struct {
	Min, Max        int
	Period, Sustain time.Duration
	SLAs            []string
	MinCompleted    int
}

// NewAdaptiveOptions returns AIPerf's defaults: from 1, windows of 30 s,
// one completed request to decide; the caller sets Sustain and SLAs.
func NewAdaptiveOptions() AdaptiveOptions {
	c := adaptive.NewConfig()
	return AdaptiveOptions{Min: c.Min, Period: c.Period, MinCompleted: c.MinCompleted}
}

// AdaptiveResult is an adaptive run's outcome (Options.Adaptive), as
// adaptive_scale_summary.json says it: Status complete, incomplete or
// failed, Reason AIPerf's code; Boundary the setting found (0: none),
// Setting the last; LastPassing and FirstFailing the highest setting
// that passed and the lowest that failed (0: none); Sustained that the
// boundary held for the sustain duration.
type AdaptiveResult struct {
	Status, Reason            string
	Boundary, Setting         int
	LastPassing, FirstFailing int
	Sustained                 bool
}
