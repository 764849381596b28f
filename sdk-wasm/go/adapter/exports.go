//go:build wasip1

package adapter

import (
	"encoding/binary"
	"encoding/json"
	"runtime"
	"unsafe"
)

// The ABI exports. Buffers are package globals (never moved by Go's
// non-moving GC) grown on request by rp_scratch.

var (
	registered Adapter
	builder    Builder
	parser     Parser
	inBuf      = make([]byte, 64<<10)
	outBuf     = make([]byte, 64<<10)
	scratchOut []byte
	writer     RequestWriter
	records    Records
	summary    Summary
	buildReq   BuildRequest
	event      Event
	maxPerEv   = 2
)

// Register installs the adapter; call it from init.
func Register(a Adapter) {
	registered = a
	builder, _ = a.(Builder)
	parser, _ = a.(Parser)
	if d := a.Describe(); d.MaxRecordsPerEvent > 0 {
		maxPerEv = d.MaxRecordsPerEvent
	}
}

func ptr(b []byte) int32 { return int32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

func pack(status uint32, v int) int64 { return int64(uint64(status)<<32 | uint64(uint32(v))) }

// result copies out into the output buffer, or asks to GROW.
func result(out []byte) int64 {
	if len(out) > len(outBuf) {
		return pack(1, len(out))
	}
	return pack(0, copy(outBuf, out))
}

func fail(status uint32, msg string) int64 {
	n := copy(outBuf, msg)
	return pack(status, n)
}

//go:wasmexport reprise_abi_v1
func abiV1() {}

//go:wasmexport rp_scratch
func rpScratch(which, n int32) int32 {
	b := &inBuf
	if which == 1 {
		b = &outBuf
	}
	if int(n) > len(*b) {
		*b = make([]byte, n)
	}
	return ptr(*b)
}

//go:wasmexport rp_gc
func rpGC() { runtime.GC() }

type describeJSON struct {
	ABI                int    `json:"abi"`
	Name               string `json:"name"`
	Version            string `json:"version"`
	Path               string `json:"path"`
	Builds             bool   `json:"builds"`
	Parses             bool   `json:"parses"`
	NeedsTokenizer     bool   `json:"needs_tokenizer"`
	Framing            string `json:"framing,omitempty"`
	MaxRecordsPerEvent int    `json:"max_records_per_event,omitempty"`
	MaxEventsPerCall   int    `json:"max_events_per_call,omitempty"`
}

//go:wasmexport rp_describe
func rpDescribe() int64 {
	if registered == nil {
		return fail(4, "no adapter registered: call adapter.Register from init")
	}
	d := registered.Describe()
	b, err := json.Marshal(describeJSON{ABI: 1, Name: d.Name, Version: d.Version, Path: d.Path,
		Builds: builder != nil, Parses: parser != nil, NeedsTokenizer: d.NeedsTokenizer,
		Framing: d.Framing, MaxRecordsPerEvent: d.MaxRecordsPerEvent, MaxEventsPerCall: d.MaxEventsPerCall})
	if err != nil {
		return fail(4, err.Error())
	}
	return result(b)
}

//go:wasmexport rp_configure
func rpConfigure(n int32) int64 {
	var c struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		IgnoreEOS    bool            `json:"ignore_eos"`
		IncludeUsage bool            `json:"include_usage"`
		ExtraBody    json.RawMessage `json:"extra_body"`
		Options      json.RawMessage `json:"options"`
		Seed         uint64          `json:"seed"`
	}
	if err := json.Unmarshal(inBuf[:n], &c); err != nil {
		return fail(2, "configure: "+err.Error())
	}
	cfg := Config{Model: c.Model, Stream: c.Stream, IgnoreEOS: c.IgnoreEOS, IncludeUsage: c.IncludeUsage,
		Options: c.Options, Seed: c.Seed}
	if !IsNull(c.ExtraBody) {
		cfg.ExtraBody = c.ExtraBody
	}
	if err := registered.Configure(&cfg); err != nil {
		return fail(4, err.Error())
	}
	return pack(0, 0)
}

//go:wasmexport rp_build
func rpBuild(n int32) int64 {
	if builder == nil {
		return fail(3, "this adapter does not build requests")
	}
	b := inBuf[:n]
	le := binary.LittleEndian
	if len(b) < 72 {
		return fail(2, "build input shorter than its header")
	}
	hs := int(le.Uint32(b))
	r := &buildReq
	*r = BuildRequest{
		Flags: le.Uint32(b[4:]), TraceRow: int64(le.Uint64(b[8:])), OffsetNS: int64(le.Uint64(b[16:])),
		InputTokens: int(le.Uint32(b[24:])), MaxTokens: int(le.Uint32(b[28:])),
		SessionSeq: le.Uint32(b[32:]), Turn: le.Uint32(b[36:]), BlockSize: int(le.Uint32(b[40:])),
		NumHash: int(le.Uint32(b[44:])), Seed: le.Uint64(b[56:]),
		PromptTextBytes: int(le.Uint32(b[64:])), PromptTokens: int(le.Uint32(b[68:])),
	}
	rl, hl := int(le.Uint32(b[48:])), int(le.Uint32(b[52:]))
	off := hs
	if hs < 72 || off+r.NumHash*8+rl+hl > len(b) {
		return fail(2, "build input sections run past its length")
	}
	r.HashIDs = b[off : off+r.NumHash*8]
	off += r.NumHash * 8
	r.Raw = b[off : off+rl]
	off += rl
	r.History = b[off : off+hl]
	writer.reset()
	if err := builder.Build(r, &writer); err != nil {
		return fail(4, err.Error())
	}
	scratchOut = writer.encode(scratchOut[:0])
	return result(scratchOut)
}

//go:wasmexport rp_open
func rpOpen(ctx, flags int32) int64 {
	if parser == nil {
		return fail(3, "this adapter does not parse responses")
	}
	parser.Open(uint32(ctx), uint32(flags))
	return pack(0, 0)
}

//go:wasmexport rp_parse
func rpParse(ctx, n int32) int64 {
	if parser == nil {
		return fail(3, "this adapter does not parse responses")
	}
	b := inBuf[:n]
	le := binary.LittleEndian
	if len(b) < 16 {
		return fail(2, "parse batch shorter than its header")
	}
	count, first, bflags := le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:])
	records.buf = append(records.buf[:0], make8[:]...)
	records.text = records.text[:0]
	records.n = 0
	records.limit = maxPerEv
	off := 16
	for i := uint32(0); i < count; i++ {
		if off+8 > len(b) {
			return fail(2, "parse batch truncated")
		}
		dl, nl, ef := int(le.Uint32(b[off:])), int(le.Uint16(b[off+4:])), le.Uint16(b[off+6:])
		start := off + 8
		if start+nl+dl > len(b) {
			return fail(2, "parse batch event runs past its length")
		}
		event = Event{Index: first + i, Name: b[start : start+nl], Data: b[start+nl : start+nl+dl],
			Flags: ef, End: bflags&1 != 0 && i == count-1}
		off = (start + nl + dl + 3) &^ 3
		records.event = first + i
		records.added = 0
		if err := parser.Parse(uint32(ctx), &event, &records); err != nil {
			return fail(4, err.Error())
		}
	}
	le.PutUint32(records.buf, uint32(records.n))
	le.PutUint32(records.buf[4:], uint32(len(records.text)))
	total := len(records.buf) + len(records.text)
	if total > len(outBuf) {
		return fail(4, "records and captured text exceed the output buffer")
	}
	copy(outBuf, records.buf)
	copy(outBuf[len(records.buf):], records.text)
	return pack(0, total)
}

var make8 [8]byte

//go:wasmexport rp_close
func rpClose(ctx int32) int64 {
	if parser == nil {
		return fail(3, "this adapter does not parse responses")
	}
	summary = Summary{}
	if err := parser.Close(uint32(ctx), &summary); err != nil {
		return fail(4, err.Error())
	}
	scratchOut = summary.encode(scratchOut[:0])
	return result(scratchOut)
}

// Host imports.

//go:wasmimport reprise log_enabled
func logEnabled(level int32) int32

//go:wasmimport reprise log
func logMsg(level int32, p unsafe.Pointer, n int32)

//go:wasmimport reprise token_count
func tokenCount(p unsafe.Pointer, n int32) int32

//go:wasmimport reprise random_u64
func randomU64() int64

// Log levels (slog's).
const (
	LevelDebug = -4
	LevelInfo  = 0
	LevelWarn  = 4
	LevelError = 8
)

// LogEnabled reports whether the host logs level; check it before
// formatting a message.
func LogEnabled(level int) bool { return logEnabled(int32(level)) != 0 }

// Log logs msg at level through the host.
func Log(level int, msg string) {
	if len(msg) == 0 {
		return
	}
	logMsg(int32(level), unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
}

// TokenCount counts tokens in text with the run's tokenizer; -1 when the
// run has none.
func TokenCount(text []byte) int {
	if len(text) == 0 {
		return 0
	}
	return int(tokenCount(unsafe.Pointer(unsafe.SliceData(text)), int32(len(text))))
}

// Random returns the next value of the deterministic per-request stream.
func Random() uint64 { return uint64(randomU64()) }
