package mockserver

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/reprise-bench/reprise/internal/chattmpl"
)

// Flavor selects whose response shapes the server reproduces.
type Flavor string

// The flavors. Their shapes follow responses recorded from llm-d-inference-sim
// (vLLM's OpenAI-compatible API) and from llama.cpp's llama-server.
const (
	FlavorVLLM     Flavor = "vllm"
	FlavorLlamaCPP Flavor = "llamacpp"
)

// JitterDist is the distribution of the random delay added to every TTFT
// and ITL.
type JitterDist string

// The jitter distributions. Jitter is the scale: the half-width of a
// uniform, the standard deviation of a normal, the mean of an exponential
// (which only ever delays). A delay never goes below zero.
const (
	JitterNone        JitterDist = "none"
	JitterUniform     JitterDist = "uniform"
	JitterNormal      JitterDist = "normal"
	JitterExponential JitterDist = "exponential"
)

// Defaults of [NewConfig].
const (
	DefaultAddr             = "127.0.0.1:8000"
	DefaultModel            = "reprise-mock"
	DefaultTTFT             = 50 * time.Millisecond
	DefaultITL              = 10 * time.Millisecond
	DefaultMaxNumSeqs       = 256
	DefaultMaxModelLen      = 131072
	DefaultBlockSize        = 16
	DefaultPrefixCacheToken = 1 << 20
	DefaultSeed             = 42
	// DefaultBodyTimeout bounds the read of one request body: a client
	// that stalls inside its body is answered 408 and disconnected.
	DefaultBodyTimeout = 10 * time.Second
	// DefaultIdleTimeout closes keep-alive connections idle this long, as
	// vLLM (uvicorn's keep-alive timeout) and llama-server do.
	DefaultIdleTimeout = 5 * time.Second
)

// Config configures a mock server. Build it with [NewConfig]; the zero value
// is not valid. Durations are per token where the name says so.
type Config struct {
	// Addr is the listen address; "127.0.0.1:0" picks a free port.
	Addr string
	// Flavor picks vLLM (default) or llama.cpp response shapes and quirks.
	Flavor Flavor
	// Models are the served model names; the first is the default. With the
	// llama.cpp flavor the request's model is ignored, as llama-server does.
	Models []string

	// TTFT is the base time from admission to the first token.
	TTFT time.Duration
	// PrefillPerToken is added to TTFT for every uncached prompt token.
	PrefillPerToken time.Duration
	// PrefillPerImage and PrefillPerAudioSecond are added to TTFT for
	// every image and every second of audio a chat or Responses request
	// carries (design 0022; the server decodes each to log it).
	PrefillPerImage, PrefillPerAudioSecond time.Duration
	// ITL is the base inter-token latency.
	ITL time.Duration
	// ITLPerRunning is added to every ITL for each other running request.
	ITLPerRunning time.Duration
	// Jitter scales the random delay JitterDist adds to TTFT and each ITL.
	Jitter     time.Duration
	JitterDist JitterDist

	// MaxNumSeqs requests run at once; the rest wait in a FIFO queue.
	MaxNumSeqs int
	// MaxModelLen is the context length: prompt + max_tokens must fit
	// (vLLM rejects with 400; llama.cpp rejects long prompts and truncates
	// the output).
	MaxModelLen int

	// BlockSize is the prefix-cache block size in tokens.
	BlockSize int
	// PrefixCacheTokens is the LRU prefix-cache capacity in tokens
	// (PrefixCacheTokens/BlockSize block slots); 0 disables the cache.
	PrefixCacheTokens int
	// ChatTemplateTokens is added to prompt_tokens per chat message, as a
	// chat template would (0 = prompt_tokens is the sum over contents).
	ChatTemplateTokens int
	// ChatTemplate, when not nil, is rendered around a chat request's
	// messages and prompt_tokens counts the result (each added token
	// one token), as vLLM counts a model's template; exclusive with
	// ChatTemplateTokens.
	ChatTemplate *chattmpl.Template
	// ReasoningTokens is how many of the first output tokens of every
	// response are sent as reasoning_content.
	ReasoningTokens int

	// Coalesce writes the SSE events that are due at the same instant
	// (role and first token, the choices of one step, the last token with
	// finish, usage and [DONE]; with a zero ITL, every step) in one write
	// instead of one write each. The oracle stamps them with that write's
	// time. Off by default: one write and flush per event.
	Coalesce bool

	// CPUPerToken is CPU work done for every output token, a busy loop of
	// this much wall time right before the token's write: a server with
	// compute of its own, for measuring a client that shares the machine
	// with it (reprise selftest's co-located case). 0 = none.
	CPUPerToken time.Duration

	// The generation endpoints' latency model (design 0023): ImageTime
	// per image, AudioPerSecond per second of audio made (speech) or
	// heard (transcription), and for a video job VideoQueue in the queue,
	// then VideoFrameTime per frame of its seconds × VideoFPS frames.
	ImageTime      time.Duration
	AudioPerSecond time.Duration
	VideoQueue     time.Duration
	VideoFrameTime time.Duration
	VideoFPS       int

	// Seed makes ids, random lengths, jitter and fault draws reproducible.
	Seed uint64
	// Faults are injected at random, each at its own rate.
	Faults []FaultRate
	// Accuracy, when not nil, answers graded prompts (accuracy.go).
	Accuracy *Accuracy

	// Tokenizer counts prompt tokens; nil uses [DefaultTokenizer].
	Tokenizer Tokenizer
	// EventLog, when not nil, receives the oracle log as JSONL
	// (docs/format/mock-server.md). The server does not close it.
	EventLog io.Writer
	// KeepLog keeps the oracle log in memory for [Server.Log]. Turn it off
	// for long runs: it grows with every request.
	KeepLog bool
	// Log receives operational messages; nil discards them.
	Log *slog.Logger

	// BodyTimeout bounds the read of a request body, from the end of its
	// headers; a client slower than that gets a 408 and its connection
	// closed. 0 = no limit.
	BodyTimeout time.Duration
	// IdleTimeout closes keep-alive connections that carried no request
	// for this long. 0 = never.
	IdleTimeout time.Duration

	maxBody int // request body limit in bytes; 0 = defaultMaxBody (tests lower it)
}

// NewConfig returns a Config with the documented defaults: vLLM flavor on
// DefaultAddr serving DefaultModel, TTFT 50 ms, ITL 10 ms, no per-token or
// per-request costs, no jitter, 256 sequences, 131072-token context, a
// 1Mi-token prefix cache in 16-token blocks, seed 42, no faults, the
// in-memory log on, a 10 s body timeout and a 5 s idle timeout.
func NewConfig() *Config {
	return &Config{
		Addr:              DefaultAddr,
		Flavor:            FlavorVLLM,
		Models:            []string{DefaultModel},
		TTFT:              DefaultTTFT,
		ITL:               DefaultITL,
		JitterDist:        JitterNone,
		MaxNumSeqs:        DefaultMaxNumSeqs,
		MaxModelLen:       DefaultMaxModelLen,
		BlockSize:         DefaultBlockSize,
		PrefixCacheTokens: DefaultPrefixCacheToken,
		Seed:              DefaultSeed,
		KeepLog:           true,
		BodyTimeout:       DefaultBodyTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		ImageTime:         DefaultImageTime,
		AudioPerSecond:    DefaultAudioPerSecond,
		VideoQueue:        DefaultVideoQueue,
		VideoFrameTime:    DefaultVideoFrameTime,
		VideoFPS:          DefaultVideoFPS,
	}
}

// Validate reports every problem of the config at once. It never changes
// the config.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Addr == "" {
		bad("addr: empty; use host:port, e.g. %s", DefaultAddr)
	}
	switch c.Flavor {
	case FlavorVLLM, FlavorLlamaCPP:
	default:
		bad("flavor %q: want vllm or llamacpp", c.Flavor)
	}
	if len(c.Models) == 0 {
		bad("models: at least one served model name is needed")
	}
	for i, m := range c.Models {
		if m == "" || !jsonSafe(m) {
			bad("models[%d] %q: must be non-empty and free of quotes, backslashes and control characters", i, m)
		}
	}
	for name, d := range map[string]time.Duration{"ttft": c.TTFT, "prefill-per-token": c.PrefillPerToken, "prefill-per-image": c.PrefillPerImage, "prefill-per-audio-second": c.PrefillPerAudioSecond,
		"itl": c.ITL, "itl-per-running": c.ITLPerRunning, "jitter": c.Jitter,
		"body-timeout": c.BodyTimeout, "idle-timeout": c.IdleTimeout, "cpu-per-token": c.CPUPerToken,
		"image-time": c.ImageTime, "audio-per-second": c.AudioPerSecond, "video-queue": c.VideoQueue, "video-frame-time": c.VideoFrameTime} {
		if d < 0 {
			bad("%s %v: must not be negative", name, d)
		}
	}
	switch c.JitterDist {
	case JitterNone, JitterUniform, JitterNormal, JitterExponential, "":
	default:
		bad("jitter-dist %q: want none, uniform, normal or exponential", c.JitterDist)
	}
	if c.VideoFPS < 0 || c.VideoFPS > 240 {
		bad("video-fps %d: want 0 to 240 (0 = %d)", c.VideoFPS, DefaultVideoFPS)
	}
	if c.MaxNumSeqs < 1 {
		bad("max-num-seqs %d: must be at least 1", c.MaxNumSeqs)
	}
	if c.MaxModelLen < 2 {
		bad("max-model-len %d: must be at least 2", c.MaxModelLen)
	}
	if c.BlockSize < 1 {
		bad("block-size %d: must be at least 1", c.BlockSize)
	}
	if c.PrefixCacheTokens < 0 {
		bad("prefix-cache-tokens %d: must be >= 0 (0 disables the cache)", c.PrefixCacheTokens)
	}
	if c.ChatTemplateTokens < 0 {
		bad("chat-template-tokens %d: must be >= 0", c.ChatTemplateTokens)
	}
	if c.ChatTemplate != nil && c.ChatTemplateTokens > 0 {
		bad("chat-template and chat-template-tokens %d: give one", c.ChatTemplateTokens)
	}
	if c.ReasoningTokens < 0 {
		bad("reasoning-tokens %d: must be >= 0", c.ReasoningTokens)
	}
	for i, f := range c.Faults {
		if f.Rate < 0 || f.Rate > 1 || f.Rate != f.Rate {
			bad("faults[%d] %s: rate %v must be within [0,1]", i, f.Fault, f.Rate)
		}
		if err := f.Fault.validate(); err != nil {
			bad("faults[%d]: %w", i, err)
		}
	}
	if c.Accuracy != nil {
		if err := c.Accuracy.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// jsonSafe reports whether s can be pasted into a JSON string literal as is.
func jsonSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Defaults of the generation latency model ([NewConfig]).
const (
	DefaultImageTime      = 100 * time.Millisecond
	DefaultAudioPerSecond = 50 * time.Millisecond
	DefaultVideoQueue     = 200 * time.Millisecond
	DefaultVideoFrameTime = 5 * time.Millisecond
	DefaultVideoFPS       = 24
	// speechCharsPerSecond is how many characters of input one second of
	// speech says.
	speechCharsPerSecond = 15
	// speechRate is the speech output's sample rate (16-bit mono), OpenAI's.
	speechRate = 24000
	// videoFrameBytes is the size of one frame of the mock's videos.
	videoFrameBytes = 1000
	// maxImageSide bounds a requested image side.
	maxImageSide = 4096
)
