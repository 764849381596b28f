package trace

// How a trace is read: Options and the types of its fields (the
// columns a table's rows come from, the media limits).

import (
	"context"
	"log/slog"

	"github.com/reprise-bench/reprise/trace/media"
)

// Options control how a trace is read. The zero value detects the format,
// uses its default block size, sorts (ReadAll) instead of rejecting
// unsorted rows, and fails on the first invalid row.
type Options struct {
	// Format overrides detection; "" detects from the content.
	Format Format
	// BlockSize is the number of tokens per hash id; 0 uses the format's
	// default (512 Mooncake, 16 Bailian). Ignored by formats without ids.
	BlockSize int
	// Strict rejects a row whose arrival is earlier than the previous
	// row's instead of counting it (and letting ReadAll sort it).
	Strict bool
	// SkipInvalid turns row errors into counted warnings: the row is
	// dropped, ReadStats.DroppedInvalid and Warnings count it.
	SkipInvalid bool
	// DropFailed drops rows the source marks as failed (BurstGPT rows
	// with zero response tokens) instead of keeping them with Failed set.
	DropFailed bool
	// ModelFilter keeps only BurstGPT rows whose Model equals it
	// (case-insensitive); "" keeps all. Only valid for burstgpt.
	ModelFilter string
	// MaxInputTokens caps a row's input length (a longer row is a row
	// error naming the field); 0 means DefaultMaxInputTokens.
	MaxInputTokens int
	// DefaultOutputTokens is the output length given to a row that has
	// none: a Mooncake or AIPerf row without output_length, a BurstGPT
	// row with 0 response tokens (a failed request; it stays Failed).
	// 0 gives none: such a row keeps OutputTokens 0 ("not given").
	DefaultOutputTokens int
	// RequireOutput makes a row without an output length a row error
	// naming the field (unless DefaultOutputTokens gives it one): a replay
	// would send it without max_tokens, a request that with ignore_eos
	// never ends. A Mooncake payload row needs none: it is sent as written.
	// A row the source marks as failed (zero BurstGPT response tokens) is
	// dropped instead, counted in ReadStats.DroppedFailed.
	RequireOutput bool
	// CountNoOutput counts the rows RequireOutput lets through without an
	// output length in ReadStats.NoOutput.
	CountNoOutput bool
	// Endpoint, when set (EndpointChat or EndpointCompletions), makes a
	// Mooncake row recorded through another endpoint a row error naming
	// the field: its lengths are what that endpoint's requests carried.
	Endpoint string
	// MaxRows, when positive, ends the read after that many kept rows:
	// Next then returns io.EOF without reading another line (ReadAll,
	// Scan and a Window stop there too). 0 reads every row.
	MaxRows int64
	// FitHashIDs keeps a Mooncake row whose hash_ids are more or fewer
	// than its input_length needs at BlockSize, for the prompt builder to
	// fit (--hash-mismatch fit); false makes such a row a row error.
	FitHashIDs bool
	// Columns name the columns of a FormatTable dataset; naming one with
	// the format left to detection reads the file as a table.
	Columns Columns
	// MediaLimits bound the images, audio and video a row may carry
	// (pixels from an image's header before decoding, bytes); the zero
	// value takes the defaults (design 0022).
	MediaLimits MediaLimits
	// Sessions reads each ShareGPT conversation as a multi-turn session,
	// one turn per human→gpt pair (sent with the live responses in the
	// history); false reads its first pair as one request.
	Sessions bool
	// CountTokens counts the tokens of a text: the input length of rows
	// with their own prompt, and a ShareGPT reply's length (its output
	// length unless DefaultOutputTokens replaces it). nil counts words
	// separated by white space.
	CountTokens func(text string) int
	// Log receives warnings (the first few skipped rows, out-of-order
	// rows); nil discards them.
	Log *slog.Logger
	// Context, when set, stops reading once it is done: NewReader, Next
	// (and ReadAll, Scan) return an error wrapping its Err as soon as
	// they next read, whatever they are doing (skipping blank lines,
	// decompressing). nil never stops.
	Context context.Context
}

// DefaultMaxInputTokens is the input length cap of [Options]: 2²⁴
// (16,777,216) tokens, above the longest context window any model offers
// (10M tokens), so no real row is refused, while a prompt at the cap is
// about 100 MB of text rather than the 7 GB a 2³⁰-token row asks for.
const DefaultMaxInputTokens = 1 << 24

// Columns name the columns of a [FormatTable] dataset (JSON Lines keys,
// CSV header names or Parquet column names). An empty name picks the
// first of its defaults the table has (see the fields); a name given but
// missing from the table is an error naming the columns it has.
type Columns struct {
	// Prompt holds the prompt text, sent as it is. Defaults: prompt,
	// text, question, instruction, input, query.
	Prompt string
	// InputLength holds the input length in tokens, for rows without a
	// prompt (one is then synthesized). Defaults: input_length,
	// input_tokens, isl.
	InputLength string
	// OutputLength holds the output length in tokens. Defaults:
	// output_length, output_tokens, max_tokens, osl.
	OutputLength string
	// Session holds a session id: rows that share one are the turns of a
	// conversation, in file order. Defaults: session_id, conversation_id.
	Session string
	// Timestamp holds the arrival in milliseconds (a fixed schedule).
	// Default: timestamp.
	Timestamp string
	// Image and Audio hold media sent with the prompt (design 0022): a
	// path, an http(s) URL, a data URL, base64 or raw bytes, a list of
	// them, or a Hugging Face {"bytes", "path"} cell. Defaults: image,
	// images; audio, audios.
	Image, Audio string
}

// IsZero reports whether no column is named.
func (c Columns) IsZero() bool { return c == Columns{} }

// column defaults, in order of preference.
var (
	promptColumns    = []string{"prompt", "text", "question", "instruction", "input", "query"}
	inputLenColumns  = []string{"input_length", "input_tokens", "isl"}
	outputLenColumns = []string{"output_length", "output_tokens", "max_tokens", "osl"}
	sessionColumns   = []string{"session_id", "conversation_id"}
	timestampColumns = []string{"timestamp"}
	imageColumns     = []string{"image", "images"}
	audioColumns     = []string{"audio", "audios"}
)

// MediaLimits bound the media a trace's rows may carry; the zero value
// takes trace/media's defaults (8192 × 8192 pixels, 64 MiB an item).
type MediaLimits = media.Limits
