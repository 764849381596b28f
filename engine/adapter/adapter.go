// Package adapter is the seam between the engine and endpoint adapters: the
// code that knows one API's request and response shapes (OpenAI chat and
// completions natively, anything else as a sandboxed Wasm module).
//
// An adapter builds requests and classifies response events. It never does
// I/O, timing, HTTP or SSE framing: the engine owns those, timestamps every
// read before any adapter code runs, and joins the adapter's [Record]s to
// its stored timestamps by event index. The types here mirror the Wasm ABI
// (docs/format/adapter-abi.md) field for field, so
// a Wasm host implements [Adapter] by copying structs in and out of guest
// memory:
//
//	ABI                         Go
//	rp_describe                 Adapter.Info
//	rp_build                    Instance.Build (BuildInput → HTTPRequest)
//	rp_open / rp_parse / rp_close  Instance.Open / Parse / Close
//	24-byte output record       Record
//	48-byte final summary       Final
//
// The package imports only engine/record, so adapter implementations
// (package wasm, package openai) never import the engine.
package adapter

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// The errors exposed.
var (
	// ErrMalformed is returned (wrapped) by Parse for a response the
	// adapter cannot read; the engine records it as record.ErrMalformed.
	ErrMalformed = errors.New("malformed response")
)

// Adapter is one endpoint adapter, compiled/loaded once per run. It is safe
// for concurrent use; its instances are not.
type Adapter interface {
	// Info describes the adapter. It is called once per run.
	Info() Info
	// NewInstance returns a new instance configured with cfg. The engine
	// creates one per goroutine that builds or parses (one per sender plus
	// the builders) and never shares an instance between goroutines. An
	// error names the adapter; the engine returns it as it is.
	NewInstance(cfg *Config) (Instance, error)
}

// Instance builds requests and parses responses for one goroutine at a
// time. Parse contexts (ctx ids) multiplex several responses on one
// instance: Open, Parse and Close for one ctx always happen on the same
// instance, and Close is always called once per opened ctx, even after a
// transport error.
type Instance interface {
	// Build renders the request for in into out. out's slices may be reused
	// by the caller between calls (out.Body = out.Body[:0] is done by Build);
	// in is read-only and only valid during the call.
	Build(in *BuildInput, out *HTTPRequest) error
	// Open starts response context ctx.
	Open(ctx uint32, flags OpenFlags) error
	// Parse classifies the events of batch (events batch.First ...
	// batch.First+len(batch.Events)-1 of context ctx) and appends zero or
	// more records per event to dst, returning the extended slice. Events
	// are only valid during the call. A returned error fails the request as
	// record.ErrAdapter.
	Parse(ctx uint32, batch *Batch, dst []Record) ([]Record, error)
	// Close ends context ctx and fills fin with the final usage and status.
	// Slices in fin (Text, Reasoning, Other, Extras) are owned by the
	// instance and valid until its next Open.
	Close(ctx uint32, fin *Final) error
	// Release frees the instance. It is not used afterwards.
	Release() error
}

// Framing tells the engine how to cut a response body into events.
type Framing uint8

// The framings (ABI describe.parse.framing).
const (
	FramingSSE    Framing = iota // text/event-stream; one event per blank-line-terminated block
	FramingNDJSON                // one event per line
	FramingRaw                   // one event per read, unframed
)

// Kind is what an endpoint does, which decides the metrics that make
// sense for it.
type Kind uint8

// The endpoint kinds.
const (
	// KindGenerate: text generation (chat, completions, …), streamed or
	// not. Every Wasm adapter is one.
	KindGenerate Kind = iota
	// KindEmbeddings: a batch of inputs in, one vector each out; no
	// output tokens, never streamed.
	KindEmbeddings
	// KindRankings: a query and passages in, a score per passage out; no
	// output tokens, never streamed.
	KindRankings
	// KindImages: a prompt in, images out (OpenAI /v1/images/generations),
	// streamed as partial images or not (design 0023).
	KindImages
	// KindVideo: an asynchronous job (OpenAI /v1/videos): submitted, then
	// polled until done, then optionally its content downloaded. The
	// adapter's instances implement [Job].
	KindVideo
	// KindTranscription: an audio clip in (multipart upload), text out
	// (OpenAI /v1/audio/transcriptions), streamed as text deltas or not.
	KindTranscription
	// KindSpeech: text in, audio out (OpenAI /v1/audio/speech), the audio
	// bytes streamed as they are made.
	KindSpeech
)

var kindNames = [...]string{"generate", "embeddings", "rankings", "images", "video", "transcription", "speech"}

// Generates reports whether the kind produces media or text over time, so
// that its responses may stream: every kind but embeddings and rankings.
func (k Kind) Generates() bool { return k != KindEmbeddings && k != KindRankings }

// Media reports whether the kind is one of the generation endpoints of
// design 0023 (images, video, transcription, speech).
func (k Kind) Media() bool { return k >= KindImages && k <= KindSpeech }

// String returns the kind's name: "generate", "embeddings", "rankings",
// "images", "video", "transcription", "speech".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Info is what an adapter says about itself (ABI rp_describe).
type Info struct {
	Name    string // e.g. "openai-chat"
	Version string
	// Kind is what the endpoint does (native adapters; the ABI has no
	// field for it, so a Wasm adapter is KindGenerate).
	Kind Kind
	// Path is the endpoint path requests go to by default, relative to the
	// base URL, e.g. "/v1/chat/completions".
	Path    string
	Framing Framing
	// Deferred asks the engine to parse a stream's events after the stream
	// ended (one or more batches at end of stream) instead of after every
	// read. Timestamps are identical either way; deferred parsing saves
	// per-call overhead for sandboxed adapters. Native adapters parse live.
	Deferred bool
	// MaxEventsPerCall bounds the events in one Parse batch (0 = no limit).
	MaxEventsPerCall int
}

// Config is the run-wide configuration given to every instance (ABI
// rp_configure). It is read-only for instances.
type Config struct {
	Model  string
	Stream bool
	// IgnoreEOS asks the server to generate exactly MaxTokens tokens.
	IgnoreEOS bool
	// MinTokens also sends a minimum output length equal to MaxTokens
	// (min_tokens, vLLM's and SGLang's sampling parameter), so that the
	// server generates exactly MaxTokens even where ignore_eos is not
	// enough (GenAI-Perf's --output-tokens-mean-deterministic). Native
	// OpenAI-style adapters only.
	MinTokens bool
	// IncludeUsage asks for a usage chunk on streams
	// (stream_options.include_usage).
	IncludeUsage bool
	// ExtraBody is a JSON object merged into every request body (after the
	// adapter's own fields, before the row's own "extra"); nil for none.
	ExtraBody json.RawMessage
	// Options are adapter-specific key=value settings (--adapter-opt).
	Options map[string]string
	// Seed is the run seed; per-request seeds derive from it.
	Seed uint64
}

// BuildFlags are the ABI build-input flags.
type BuildFlags uint32

// The build flags (ABI bit positions).
const (
	BuildStream    BuildFlags = 1 << 0
	BuildWarmup    BuildFlags = 1 << 1
	BuildHasRaw    BuildFlags = 1 << 2
	BuildFirstTurn BuildFlags = 1 << 3
	BuildHistory   BuildFlags = 1 << 4
)

// BuildInput is one request's fields (ABI rp_build input).
type BuildInput struct {
	Flags          BuildFlags
	TraceRow       int64
	IntendedOffset time.Duration // from run start
	InputTokens    int           // trace input length
	MaxTokens      int           // output tokens to request; 0 = do not send a limit
	SessionSeq     uint32        // host-interned session number
	Turn           uint32
	BlockSize      int
	HashIDs        []uint64
	Raw            json.RawMessage // the row's own text_input/messages/payload/extra, verbatim
	History        []byte          // captured assistant text of earlier turns
	Seed           uint64          // per-request seed

	// The host-synthesized prompt, as text and/or token ids (either may be
	// empty). Adapters that want to avoid copying large prompts emit a
	// [Hole] instead of writing it into the body. With BuildHistory they
	// hold the whole conversation as one completions prompt: every
	// earlier turn's prompt and response, then this turn's prompt.
	PromptText   string
	PromptTokens []int
	// SessionID is the trace row's session id ("" = none). Native
	// adapters only (template placeholders); the Wasm ABI passes the
	// interned SessionSeq.
	SessionID string
	// Inputs are the further inputs of a batch, each synthesized like
	// PromptText: with KindEmbeddings the inputs after PromptText, with
	// KindRankings the passages (PromptText is the query). Native
	// adapters only: the Wasm ABI has no batches. Owned by the engine;
	// read-only.
	Inputs []string
	// Messages is set with BuildHistory: the conversation as chat
	// messages, the earlier turns' user prompts and assistant responses
	// alternating, then this turn's prompt as the last user message. A
	// chat adapter sends it as its messages array (the engine renders it
	// at a HoleMessages hole). Owned by the engine; read-only.
	Messages []Message
	// Media are the request's synthetic images, audio clips and videos,
	// rendered once as content parts (design 0022); a trace row's own
	// media travel in Raw's "media" array instead. They go with the
	// (last) user message. Native adapters only. Owned by the engine;
	// read-only.
	Media []MediaPart
}

// MediaPart is one image, audio clip or video, rendered as an OpenAI chat
// content part (Chat: image_url, input_audio, video_url) and as a
// Responses API input part (Responses: input_image, input_file).
type MediaPart struct {
	Chat, Responses []byte
}

// Message is one chat message of a multi-turn conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Method is the HTTP method of a built request.
type Method uint16

// The methods (ABI codes).
const (
	MethodPOST Method = iota
	MethodGET
	MethodPUT
)

func (m Method) String() string {
	switch m {
	case MethodGET:
		return "GET"
	case MethodPUT:
		return "PUT"
	default:
		return "POST"
	}
}

// Header is one request header.
type Header struct{ Name, Value string }

// HoleKind says what the engine splices into a body at a [Hole].
type HoleKind uint32

// The hole kinds (ABI codes).
const (
	HolePromptText   HoleKind = 1 // prompt text as JSON string contents (escaped, no quotes)
	HolePromptTokens HoleKind = 2 // prompt token ids as a JSON int array, brackets included
	HoleMessages     HoleKind = 3 // an OpenAI messages array, brackets included: one user message, or BuildInput.Messages with BuildHistory
)

// Hole marks where the engine splices the synthesized prompt into Body.
// Holes are sorted by Offset; several may share one offset.
type Hole struct {
	Offset int // byte offset in Body
	Kind   HoleKind
	Arg    uint32
}

// HTTPRequest is a built request (ABI rp_build output). Path is relative to
// the target's base URL and may carry a query.
type HTTPRequest struct {
	Method Method
	Path   string
	Header []Header
	Body   []byte
	Holes  []Hole
}

// Reset empties r, keeping its buffers.
func (r *HTTPRequest) Reset() {
	r.Method = MethodPOST
	r.Path = ""
	r.Header = r.Header[:0]
	r.Body = r.Body[:0]
	r.Holes = r.Holes[:0]
}

// OpenFlags are passed to Open.
type OpenFlags uint32

// The open flags.
const (
	// OpenStream: the response is an event stream (else one whole body).
	OpenStream OpenFlags = 1 << 0
	// OpenCaptureText asks the instance to capture content and reasoning
	// text (decoded) into Final.Text and Final.Reasoning, for client-side
	// token counting and multi-turn history.
	OpenCaptureText OpenFlags = 1 << 1
)

// EventFlags describe one framed event.
type EventFlags uint16

// The event flags.
const (
	EventComment   EventFlags = 1 << 0 // an SSE comment line block (keep-alive), Data holds the comment text
	EventDone      EventFlags = 1 << 1 // the data is the OpenAI "[DONE]" sentinel
	EventWholeBody EventFlags = 1 << 2 // a non-streaming body delivered as one event
	EventNonOK     EventFlags = 1 << 3 // the body of a non-2xx response
)

// Event is one framed response event: an SSE event's name and data (the
// data lines joined with "\n", without the "data:" prefixes), an NDJSON
// line, or a whole body.
type Event struct {
	Name  []byte
	Data  []byte
	Flags EventFlags
}

// BatchFlags describe a Parse batch.
type BatchFlags uint32

// The batch flags (ABI codes).
const (
	BatchEndOfStream BatchFlags = 1 << 0 // the stream ended after these events
	BatchWholeBody   BatchFlags = 1 << 1 // the batch is one non-streaming body
)

// Batch is a group of consecutive events of one context (ABI rp_parse input).
type Batch struct {
	First  uint32 // index of Events[0] within the response
	Flags  BatchFlags
	Events []Event
}

// TokensUnknown is Record.Tokens when the adapter does not know how many
// tokens an event carried.
const TokensUnknown = ^uint32(0)

// RecordFlags are the ABI record flags.
type RecordFlags uint8

// The record flags.
const (
	RecordTextCaptured RecordFlags = 1 << 0
	RecordTokensExact  RecordFlags = 1 << 1
	RecordRefusal      RecordFlags = 1 << 2
)

// Record classifies (part of) one event: the ABI's 24-byte output record.
// An event yields zero or more records (e.g. content for two choices, or
// content plus finish plus usage).
type Record struct {
	Kind      record.EventKind
	Flags     RecordFlags
	Choice    uint16
	Event     uint32 // index of the event within the response
	TextBytes uint32 // decoded text bytes of this kind in this event
	Tokens    uint32 // tokens carried, TokensUnknown when unknown
	Aux0      uint32 // finish reason code (Finish), error code (Error)
	Aux1      uint32 // tool-call index (ToolCall)
}

// FinishReason codes (ABI final summary and Finish records' Aux0).
type FinishReason uint32

// The finish reasons.
const (
	FinishUnknown FinishReason = iota
	FinishStop
	FinishLength
	FinishToolCalls
	FinishContentFilter
	FinishError
)

var finishNames = [...]string{"", "stop", "length", "tool_calls", "content_filter", "error"}

// String returns the OpenAI spelling ("" for unknown).
func (f FinishReason) String() string {
	if int(f) < len(finishNames) {
		return finishNames[f]
	}
	return ""
}

// ParseFinishReason maps an OpenAI finish_reason to its code.
func ParseFinishReason(s []byte) FinishReason {
	switch string(s) {
	case "stop", "eos", "stop_sequence", "end_turn":
		return FinishStop
	case "length", "max_tokens":
		return FinishLength
	case "tool_calls", "function_call", "tool_use":
		return FinishToolCalls
	case "content_filter":
		return FinishContentFilter
	case "error":
		return FinishError
	}
	return FinishUnknown
}

// Valid bits of Final.Valid: which usage fields the server reported.
const (
	ValidPromptTokens uint32 = 1 << iota
	ValidCompletionTokens
	ValidReasoningTokens
	ValidCachedTokens
	ValidFinishReason
	ValidError
)

// Final is the end-of-response summary (ABI rp_close output): the last
// non-null usage seen, the finish reason, and any error reported inside the
// response.
type Final struct {
	Valid            uint32 // Valid* bits
	PromptTokens     uint32
	CompletionTokens uint32 // including reasoning
	ReasoningTokens  uint32
	CachedTokens     uint32
	FinishReason     FinishReason
	Choices          uint32 // distinct choices seen
	ErrorCode        uint32 // 0 none; HTTP-like, or adapter-defined ≥ 1000
	ErrorMessage     []byte
	Extras           []byte // server-specific JSON stored verbatim (llama.cpp timings), ≤ 4 KiB

	// Captured text (only with OpenCaptureText): choice 0's content and
	// reasoning, and Other, the content and reasoning of every other
	// choice in the order of their text-captured records (a choice's text
	// is its records' TextBytes in turn), for client-side token counting.
	// Refusals are not captured.
	Text      []byte
	Reasoning []byte
	Other     []byte

	// Media is what a generation endpoint's response carried (native
	// adapters only: the ABI has no field for it).
	Media Media
	// Job is the state of an asynchronous job a response reported
	// (KindVideo; native adapters only). Its ID is owned by the instance
	// and valid until its next Open.
	Job JobState
}

// Media counts the media of one response of a generation endpoint
// (design 0023). The zero value is none.
type Media struct {
	// Items is the number of final media items: images, or 1 for an
	// audio or video output.
	Items int32
	// Partials is the number of partial images streamed before the
	// final ones.
	Partials int32
	// Bytes is the decoded bytes of the final items (base64 decoded;
	// the audio bytes of speech; a video's content).
	Bytes int64
	// AudioNS is the duration of the audio the response carried (speech,
	// from the WAV header or the PCM byte count) in ns; 0 unknown.
	AudioNS int64
	// FirstEvent is the index of the event that carried the first media
	// (a partial or final image, the first audio bytes), plus one; 0 =
	// none.
	FirstEvent uint32
}

// JobStatus is the state of an asynchronous job.
type JobStatus uint8

// The job states (OpenAI's video statuses).
const (
	JobUnknown    JobStatus = iota
	JobQueued               // "queued"
	JobInProgress           // "in_progress", "processing", "running"
	JobCompleted            // "completed", "succeeded"
	JobFailed               // "failed", "cancelled", "expired"
)

// ParseJobStatus maps a status string to its code.
func ParseJobStatus(s []byte) JobStatus {
	switch string(s) {
	case "queued", "pending", "submitted":
		return JobQueued
	case "in_progress", "processing", "running", "generating":
		return JobInProgress
	case "completed", "succeeded", "success", "done":
		return JobCompleted
	case "failed", "cancelled", "canceled", "expired", "error":
		return JobFailed
	}
	return JobUnknown
}

// JobState is what one response said of a job.
type JobState struct {
	ID       []byte
	Status   JobStatus
	Progress int32 // percent, -1 unknown
}

// Job is implemented by the instances of [KindVideo] adapters: after the
// submit response, the engine polls the job at its interval with
// PollRequest's request until a response's Final.Job says completed or
// failed, then (when asked) downloads its content with ContentRequest's.
// Every response is parsed like the submit's (Open, Parse, Close).
type Job interface {
	// PollRequest renders the status request of job id into out.
	PollRequest(id []byte, out *HTTPRequest) error
	// ContentRequest renders the content download of job id into out.
	ContentRequest(id []byte, out *HTTPRequest) error
}

// Reset empties f, keeping nothing.
func (f *Final) Reset() { *f = Final{} }
