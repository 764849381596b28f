// Package adapter is the Go SDK for reprise endpoint adapters (ABI v1,
// docs/format/adapter-abi.md in the reprise repository). It hides the ABI:
// an adapter implements [Adapter] plus [Builder] and/or [Parser], calls
// [Register] from init, and is built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o NAME.wasm .
//
// The package also offers an allocation-free JSON scanner ([Get],
// [GetPath], [Each], [StringLen], [StringEquals]) because encoding/json is
// slow and allocates inside a Go guest.
package adapter

import "encoding/binary"

// Description is what the adapter says about itself (ABI §2.1). Builds and
// Parses are filled in by the SDK from the interfaces the adapter
// implements.
type Description struct {
	Name               string
	Version            string
	Path               string // default request path, e.g. /v1/messages
	NeedsTokenizer     bool
	Framing            string // "sse" (default), "ndjson" or "raw"
	MaxRecordsPerEvent int    // default 4
	MaxEventsPerCall   int    // default 256
}

// Config is the run configuration (ABI §2.2).
type Config struct {
	Model        string
	Stream       bool
	IgnoreEOS    bool
	IncludeUsage bool
	ExtraBody    []byte // JSON object or nil
	Options      []byte // JSON object: --adapter-config merged with --adapter-opt
	Seed         uint64
}

// Adapter is implemented by every adapter.
type Adapter interface {
	Describe() Description
	// Configure is called once per instance before anything else.
	Configure(c *Config) error
}

// Builder builds requests (ABI §3).
type Builder interface {
	Build(r *BuildRequest, w *RequestWriter) error
}

// Open flags.
const (
	OpenStream  = 1 // the response is a stream (else one whole body)
	OpenCapture = 2 // capture decoded content/reasoning text (Records.AddText)
)

// Parser classifies response events (ABI §4, §5). Contexts multiplex many
// responses on one instance.
type Parser interface {
	Open(ctx uint32, flags uint32)
	Parse(ctx uint32, ev *Event, out *Records) error
	Close(ctx uint32, s *Summary) error
}

// Build flags.
const (
	BuildStream    = 1 << 0
	BuildWarmup    = 1 << 1
	BuildHasRaw    = 1 << 2
	BuildFirstTurn = 1 << 3
	BuildHistory   = 1 << 4
)

// BuildRequest is one trace row's request fields. Slices point into the
// SDK's input buffer and are valid only during Build.
type BuildRequest struct {
	Flags                  uint32
	TraceRow               int64
	OffsetNS               int64
	InputTokens, MaxTokens int
	SessionSeq, Turn       uint32
	BlockSize              int
	HashIDs                []byte // n × u64 little-endian; use HashID(i)
	NumHash                int
	Raw                    []byte // the row's own JSON, verbatim (may be empty)
	History                []byte // earlier turns' assistant text
	Seed                   uint64
	PromptTextBytes        int // length of the host's prompt text
	PromptTokens           int // number of prompt token ids the host has
}

// Stream reports whether the request should stream.
func (r *BuildRequest) Stream() bool { return r.Flags&BuildStream != 0 }

// HashID returns hash id i.
func (r *BuildRequest) HashID(i int) uint64 { return binary.LittleEndian.Uint64(r.HashIDs[i*8:]) }

// Methods for [RequestWriter.SetMethod].
const (
	POST = 0
	GET  = 1
	PUT  = 2
)

// Hole kinds for the prompt (ABI §3).
const (
	HoleText     = 1 // JSON string contents, escaped, no quotes
	HoleTokens   = 2 // JSON array of token ids
	HoleMessages = 3 // an OpenAI messages array with one user message
)

// RequestWriter collects the built request. Body helpers append to the
// body; Prompt* mark where the host inserts the prompt.
type RequestWriter struct {
	method  uint16
	path    []byte
	headers []byte
	nhead   int
	holes   []byte
	nholes  int
	Body    []byte
}

func (w *RequestWriter) reset() {
	w.method, w.nhead, w.nholes = POST, 0, 0
	w.path, w.headers, w.holes, w.Body = w.path[:0], w.headers[:0], w.holes[:0], w.Body[:0]
}

// SetMethod sets POST (default), GET or PUT.
func (w *RequestWriter) SetMethod(m int) { w.method = uint16(m) }

// SetPath sets the path and query (default: the described endpoint).
func (w *RequestWriter) SetPath(p string) { w.path = append(w.path[:0], p...) }

// Header adds a request header.
func (w *RequestWriter) Header(name, value string) {
	w.headers = binary.LittleEndian.AppendUint32(w.headers, uint32(len(name)))
	w.headers = binary.LittleEndian.AppendUint32(w.headers, uint32(len(value)))
	w.headers = append(append(w.headers, name...), value...)
	w.nhead++
}

// Raw appends s to the body verbatim.
func (w *RequestWriter) Raw(s string) { w.Body = append(w.Body, s...) }

// RawBytes appends b to the body verbatim.
func (w *RequestWriter) RawBytes(b []byte) { w.Body = append(w.Body, b...) }

// String appends s as a quoted JSON string.
func (w *RequestWriter) String(s string) { w.Body = AppendQuoted(w.Body, s) }

// Int appends n in decimal.
func (w *RequestWriter) Int(n int64) {
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	w.Body = append(w.Body, buf[i:]...)
}

// Prompt marks a hole of the given kind at the end of the body.
func (w *RequestWriter) Prompt(kind int) {
	w.holes = binary.LittleEndian.AppendUint32(w.holes, uint32(len(w.Body)))
	w.holes = binary.LittleEndian.AppendUint32(w.holes, uint32(kind))
	w.holes = binary.LittleEndian.AppendUint32(w.holes, 0)
	w.nholes++
}

// encode appends the ABI build output to dst.
func (w *RequestWriter) encode(dst []byte) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, 24)
	dst = le.AppendUint16(dst, w.method)
	dst = le.AppendUint16(dst, uint16(w.nhead))
	dst = le.AppendUint32(dst, uint32(len(w.path)))
	dst = le.AppendUint32(dst, uint32(len(w.Body)))
	dst = le.AppendUint32(dst, uint32(w.nholes))
	dst = le.AppendUint32(dst, 0)
	dst = append(dst, w.path...)
	dst = append(dst, w.headers...)
	dst = append(dst, w.holes...)
	return append(dst, w.Body...)
}

// Event flags.
const (
	EventComment   = 1 // SSE comment block (keep-alive); Data is its text
	EventDone      = 2 // the "[DONE]" sentinel
	EventWholeBody = 4 // a non-streaming body
	EventNonOK     = 8 // the body of a non-2xx response
)

// Event is one framed response event. Slices are valid only during Parse.
type Event struct {
	Index uint32 // within the response
	Name  []byte // SSE event name, empty when none
	Data  []byte
	Flags uint16
	// End is true for the last event of the stream.
	End bool
}

// Kinds of records (= reprise's record.EventKind).
const (
	KindIgnore    = 0
	KindContent   = 1
	KindReasoning = 2
	KindToolCall  = 3
	KindUsage     = 4
	KindError     = 5
	KindFinish    = 6
	KindMeta      = 7
)

// Finish codes.
const (
	FinishUnknown       = 0
	FinishStop          = 1
	FinishLength        = 2
	FinishToolCalls     = 3
	FinishContentFilter = 4
	FinishError         = 5
)

// Record flags.
const (
	FlagTextCaptured = 1
	FlagTokensExact  = 2
	FlagRefusal      = 4
)

// TokensUnknown is Record.Tokens when unknown.
const TokensUnknown = ^uint32(0)

// Record is one classification of (part of) an event (24 bytes in the ABI).
type Record struct {
	Kind      uint8
	Flags     uint8
	Choice    uint16
	TextBytes uint32
	Tokens    uint32 // TokensUnknown when unknown
	Aux0      uint32 // finish code (finish), error code (error)
	Aux1      uint32 // tool-call index (tool call)
}

// Records collects the records of the batch being parsed.
type Records struct {
	buf   []byte
	text  []byte
	n     int
	limit int
	event uint32
	added int
}

// Add appends r for the current event. Records beyond
// max_records_per_event for one event are dropped.
func (o *Records) Add(r Record) { o.add(r, nil) }

// AddText appends r with its decoded text captured (when the context was
// opened with OpenCapture; otherwise it is Add). r.TextBytes is set to
// len(text).
func (o *Records) AddText(r Record, text []byte, capture bool) {
	if !capture {
		o.add(r, nil)
		return
	}
	r.Flags |= FlagTextCaptured
	r.TextBytes = uint32(len(text))
	o.add(r, text)
}

func (o *Records) add(r Record, text []byte) {
	if o.added >= o.limit {
		return
	}
	o.added++
	o.n++
	n := len(o.buf)
	if cap(o.buf)-n < recordSize {
		o.buf = append(o.buf, make([]byte, recordSize)...)
	}
	o.buf = o.buf[:n+recordSize]
	p := o.buf[n : n+recordSize]
	le := binary.LittleEndian
	p[0], p[1] = r.Kind, r.Flags
	le.PutUint16(p[2:], r.Choice)
	le.PutUint32(p[4:], o.event)
	le.PutUint32(p[8:], r.TextBytes)
	le.PutUint32(p[12:], r.Tokens)
	le.PutUint32(p[16:], r.Aux0)
	le.PutUint32(p[20:], r.Aux1)
	if len(text) > 0 {
		o.text = append(o.text, text...)
	}
}

// recordSize is the size of one record in the ABI.
const recordSize = 24

// Valid bits of Summary.Valid.
const (
	ValidPromptTokens = 1 << iota
	ValidCompletionTokens
	ValidReasoningTokens
	ValidCachedTokens
	ValidFinishReason
	ValidError
)

// Summary is the final status of a response (ABI §5).
type Summary struct {
	Valid                                                         uint32
	PromptTokens, CompletionTokens, ReasoningTokens, CachedTokens uint32
	Finish                                                        uint32
	Choices                                                       uint32
	ErrorCode                                                     uint32
	Message                                                       []byte // ≤ 1 KiB
	Extras                                                        []byte // ≤ 4 KiB JSON
}

func (s *Summary) encode(dst []byte) []byte {
	le := binary.LittleEndian
	msg, ext := s.Message, s.Extras
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	if len(ext) > 4096 {
		ext = nil
	}
	dst = le.AppendUint32(dst, 48)
	dst = le.AppendUint32(dst, s.Valid)
	dst = le.AppendUint32(dst, s.PromptTokens)
	dst = le.AppendUint32(dst, s.CompletionTokens)
	dst = le.AppendUint32(dst, s.ReasoningTokens)
	dst = le.AppendUint32(dst, s.CachedTokens)
	dst = le.AppendUint32(dst, s.Finish)
	dst = le.AppendUint32(dst, s.Choices)
	dst = le.AppendUint32(dst, s.ErrorCode)
	dst = le.AppendUint32(dst, uint32(len(msg)))
	dst = le.AppendUint32(dst, uint32(len(ext)))
	dst = le.AppendUint32(dst, 0)
	return append(append(dst, msg...), ext...)
}

// FinishCode maps a finish/stop reason JSON string to a code.
func FinishCode(v []byte) uint32 {
	switch {
	case StringEquals(v, "stop"), StringEquals(v, "eos"), StringEquals(v, "end_turn"), StringEquals(v, "stop_sequence"), StringEquals(v, "eos_token"):
		return FinishStop
	case StringEquals(v, "length"), StringEquals(v, "max_tokens"):
		return FinishLength
	case StringEquals(v, "tool_calls"), StringEquals(v, "tool_use"), StringEquals(v, "function_call"):
		return FinishToolCalls
	case StringEquals(v, "content_filter"):
		return FinishContentFilter
	case StringEquals(v, "error"):
		return FinishError
	}
	return FinishUnknown
}
