package wasm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// ABIVersion is the adapter ABI version this host speaks
// (docs/format/adapter-abi.md).
const ABIVersion = 1

// Status codes packed in the high half of every i64 result.
const (
	statusOK          = 0
	statusGrow        = 1
	statusBadInput    = 2
	statusUnsupported = 3
	statusGuestError  = 4
)

var statusNames = [...]string{"OK", "GROW", "BAD_INPUT", "UNSUPPORTED", "GUEST_ERROR"}

func statusName(s uint32) string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status " + strconv.FormatUint(uint64(s), 10)
}

// ABI struct sizes and limits.
const (
	buildHeaderSize  = 72
	builtHeaderSize  = 24
	batchHeaderSize  = 16
	recordsHeader    = 8
	recordSize       = 24
	summaryFixedSize = 48
	maxMessage       = 1024
	maxExtras        = 4096
	maxBody          = 4 << 20
	maxHeaders       = 64
	maxHoles         = 64
	maxBuffer        = 16 << 20
	maxBatchEvents   = 256
	maxRecordsPerEv  = 16
)

// Description is what a module says about itself (rp_describe).
type Description struct {
	ABI                int    `json:"abi"`
	Name               string `json:"name"`
	Version            string `json:"version"`
	Path               string `json:"path"`
	Builds             bool   `json:"builds"`
	Parses             bool   `json:"parses"`
	NeedsTokenizer     bool   `json:"needs_tokenizer"`
	Framing            string `json:"framing"`
	MaxRecordsPerEvent int    `json:"max_records_per_event"`
	MaxEventsPerCall   int    `json:"max_events_per_call"`
}

// parseDescription decodes and validates rp_describe output, filling
// defaults.
func parseDescription(b []byte) (Description, error) {
	d := Description{Framing: "sse", MaxRecordsPerEvent: 4, MaxEventsPerCall: maxBatchEvents}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("rp_describe output is not a JSON object: %w", err)
	}
	var errs []error
	if d.ABI != ABIVersion {
		errs = append(errs, fmt.Errorf("rp_describe says abi %d, the module exports the v%d marker", d.ABI, ABIVersion))
	}
	if !validName(d.Name) {
		errs = append(errs, fmt.Errorf("rp_describe: name %q: want [a-z0-9-]+", d.Name))
	}
	if !d.Builds && !d.Parses {
		errs = append(errs, errors.New("rp_describe: neither builds nor parses is true"))
	}
	if _, ok := framings[d.Framing]; !ok {
		errs = append(errs, fmt.Errorf("rp_describe: framing %q: want sse, ndjson or raw", d.Framing))
	}
	if d.Path != "" && (d.Path[0] != '/' || !printableASCII([]byte(d.Path))) {
		errs = append(errs, fmt.Errorf("rp_describe: path %q must start with /", d.Path))
	}
	if d.MaxRecordsPerEvent < 1 || d.MaxRecordsPerEvent > maxRecordsPerEv {
		errs = append(errs, fmt.Errorf("rp_describe: max_records_per_event %d: want 1..%d", d.MaxRecordsPerEvent, maxRecordsPerEv))
	}
	if d.MaxEventsPerCall < 1 || d.MaxEventsPerCall > maxBatchEvents {
		errs = append(errs, fmt.Errorf("rp_describe: max_events_per_call %d: want 1..%d", d.MaxEventsPerCall, maxBatchEvents))
	}
	return d, errors.Join(errs...)
}

var framings = map[string]adapter.Framing{"sse": adapter.FramingSSE, "ndjson": adapter.FramingNDJSON, "raw": adapter.FramingRaw}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// configJSON is the rp_configure input (adapter-abi.md §2.2).
type configJSON struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	IgnoreEOS    bool            `json:"ignore_eos"`
	IncludeUsage bool            `json:"include_usage"`
	ExtraBody    json.RawMessage `json:"extra_body"`
	Options      map[string]any  `json:"options"`
	Seed         uint64          `json:"seed"`
}

// marshalConfig renders the configure input: the engine's run config with
// the --adapter-config object merged under the --adapter-opt strings.
func marshalConfig(cfg *adapter.Config, adapterConfig json.RawMessage) ([]byte, error) {
	c := configJSON{Model: cfg.Model, Stream: cfg.Stream, IgnoreEOS: cfg.IgnoreEOS, IncludeUsage: cfg.IncludeUsage,
		ExtraBody: cfg.ExtraBody, Seed: cfg.Seed, Options: map[string]any{}}
	if len(bytes.TrimSpace(c.ExtraBody)) == 0 {
		c.ExtraBody = json.RawMessage("null")
	} else if !json.Valid(c.ExtraBody) {
		return nil, errors.New("extra body is not valid JSON")
	}
	if len(bytes.TrimSpace(adapterConfig)) > 0 {
		if err := json.Unmarshal(adapterConfig, &c.Options); err != nil {
			return nil, fmt.Errorf("--adapter-config: want a JSON object: %w", err)
		}
		if c.Options == nil {
			c.Options = map[string]any{}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Options)) {
		c.Options[k] = cfg.Options[k]
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	// extra_body goes verbatim (json.Marshal would compact it), so a guest
	// can reproduce the native adapter's bytes.
	b = append(b[:len(b)-1], `,"extra_body":`...)
	b = append(b, bytes.TrimSpace(c.ExtraBody)...)
	return append(b, '}'), nil
}

// appendBuildInput encodes in (adapter-abi.md §3).
func appendBuildInput(dst []byte, in *adapter.BuildInput) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, buildHeaderSize)
	dst = le.AppendUint32(dst, uint32(in.Flags))
	dst = le.AppendUint64(dst, uint64(in.TraceRow))
	dst = le.AppendUint64(dst, uint64(in.IntendedOffset))
	dst = le.AppendUint32(dst, clampU32(in.InputTokens))
	dst = le.AppendUint32(dst, clampU32(in.MaxTokens))
	dst = le.AppendUint32(dst, in.SessionSeq)
	dst = le.AppendUint32(dst, in.Turn)
	dst = le.AppendUint32(dst, clampU32(in.BlockSize))
	dst = le.AppendUint32(dst, uint32(len(in.HashIDs)))
	dst = le.AppendUint32(dst, uint32(len(in.Raw)))
	dst = le.AppendUint32(dst, uint32(len(in.History)))
	dst = le.AppendUint64(dst, in.Seed)
	dst = le.AppendUint32(dst, clampU32(len(in.PromptText)))
	dst = le.AppendUint32(dst, clampU32(len(in.PromptTokens)))
	for _, h := range in.HashIDs {
		dst = le.AppendUint64(dst, h)
	}
	dst = append(dst, in.Raw...)
	return append(dst, in.History...)
}

func clampU32(n int) uint32 {
	if n < 0 {
		return 0
	}
	if n > 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(n)
}

var methods = [...]adapter.Method{adapter.MethodPOST, adapter.MethodGET, adapter.MethodPUT}

// decodeRequest decodes rp_build output into dst (reset first), copying
// everything out of b (guest memory). defaultPath fills an empty path.
func decodeRequest(b []byte, defaultPath string, dst *adapter.HTTPRequest) error {
	le := binary.LittleEndian
	dst.Reset()
	if len(b) < builtHeaderSize {
		return fmt.Errorf("build output: %d bytes, shorter than the %d-byte header", len(b), builtHeaderSize)
	}
	if sz := le.Uint32(b); sz < builtHeaderSize || int64(sz) > int64(len(b)) {
		return fmt.Errorf("build output: struct_size %d, want >= %d and <= %d", sz, builtHeaderSize, len(b))
	}
	m := le.Uint16(b[4:])
	if int(m) >= len(methods) {
		return fmt.Errorf("build output: method code %d, want 0 POST, 1 GET or 2 PUT", m)
	}
	nh := int(le.Uint16(b[6:]))
	pathLen := le.Uint32(b[8:])
	bodyLen := le.Uint32(b[12:])
	nholes := le.Uint32(b[16:])
	if nh > maxHeaders {
		return fmt.Errorf("build output: %d headers, limit %d", nh, maxHeaders)
	}
	if nholes > maxHoles {
		return fmt.Errorf("build output: %d holes, limit %d", nholes, maxHoles)
	}
	if bodyLen > maxBody {
		return fmt.Errorf("build output: body %d bytes, limit %d", bodyLen, maxBody)
	}
	off := uint64(le.Uint32(b))
	take := func(n uint64, what string) ([]byte, error) {
		if off+n > uint64(len(b)) {
			return nil, fmt.Errorf("build output: %s (%d bytes at %d) runs past the %d bytes written", what, n, off, len(b))
		}
		s := b[off : off+n]
		off += n
		return s, nil
	}
	p, err := take(uint64(pathLen), "path")
	if err != nil {
		return err
	}
	if len(p) > 0 && (p[0] != '/' || !printableASCII(p)) {
		return fmt.Errorf("build output: path %q must start with / and be printable ASCII", truncate(p, 64))
	}
	dst.Method = methods[m]
	dst.Path = string(p)
	if dst.Path == "" {
		dst.Path = defaultPath
	}
	for i := 0; i < nh; i++ {
		lens, err := take(8, "header lengths")
		if err != nil {
			return err
		}
		name, err := take(uint64(le.Uint32(lens)), "header name")
		if err != nil {
			return err
		}
		val, err := take(uint64(le.Uint32(lens[4:])), "header value")
		if err != nil {
			return err
		}
		if !validToken(name) {
			return fmt.Errorf("build output: header %d name %q is not an HTTP token", i, truncate(name, 64))
		}
		if !validHeaderValue(val) {
			return fmt.Errorf("build output: header %s value contains CR, LF or NUL", name)
		}
		dst.Header = append(dst.Header, adapter.Header{Name: string(name), Value: string(val)})
	}
	holes, err := take(uint64(nholes)*12, "holes")
	if err != nil {
		return err
	}
	body, err := take(uint64(bodyLen), "body")
	if err != nil {
		return err
	}
	last := 0
	for i := 0; i < int(nholes); i++ {
		h := holes[i*12:]
		o, k := int(le.Uint32(h)), adapter.HoleKind(le.Uint32(h[4:]))
		if o < last || o > len(body) {
			return fmt.Errorf("build output: hole %d at body offset %d: want %d..%d (offsets non-decreasing)", i, o, last, len(body))
		}
		if k < adapter.HolePromptText || k > adapter.HoleMessages {
			return fmt.Errorf("build output: hole %d kind %d: want 1, 2 or 3", i, k)
		}
		last = o
		dst.Holes = append(dst.Holes, adapter.Hole{Offset: o, Kind: k, Arg: le.Uint32(h[8:])})
	}
	dst.Body = append(dst.Body, body...)
	return nil
}

func printableASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func validToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`:(),/;<>=?@[]\"{}`), c) >= 0 {
			return false
		}
	}
	return true
}

func validHeaderValue(b []byte) bool {
	return !bytes.ContainsAny(b, "\r\n\x00")
}

// eventSize is the encoded size of one event in a batch.
func eventSize(e *adapter.Event) int {
	return (8 + len(e.Name) + len(e.Data) + 3) &^ 3
}

// appendBatch encodes a parse batch (adapter-abi.md §4).
func appendBatch(dst []byte, events []adapter.Event, first uint32, flags adapter.BatchFlags) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, uint32(len(events)))
	dst = le.AppendUint32(dst, first)
	dst = le.AppendUint32(dst, uint32(flags))
	dst = le.AppendUint32(dst, 0)
	for i := range events {
		e := &events[i]
		dst = le.AppendUint32(dst, uint32(len(e.Data)))
		dst = le.AppendUint16(dst, uint16(min(len(e.Name), 0xffff)))
		dst = le.AppendUint16(dst, uint16(e.Flags))
		dst = append(dst, e.Name[:min(len(e.Name), 0xffff)]...)
		dst = append(dst, e.Data...)
		for pad := (4 - (8+min(len(e.Name), 0xffff)+len(e.Data))%4) % 4; pad > 0; pad-- {
			dst = append(dst, 0)
		}
	}
	return dst
}

// decodeRecords appends the records of rp_parse output b to dst and, for
// records flagged text-captured, appends their text to text (choice 0
// content), reasoning (choice 0 reasoning) or other (content and reasoning
// of the other choices), as adapter.Final holds them. The batch covered
// events first..first+n-1; maxRecs bounds the count.
func decodeRecords(b []byte, first, n uint32, maxRecs int, dst []adapter.Record, text, reasoning, other *[]byte) ([]adapter.Record, error) {
	le := binary.LittleEndian
	if len(b) < recordsHeader {
		return dst, fmt.Errorf("parse output: %d bytes, shorter than the %d-byte header", len(b), recordsHeader)
	}
	nr, tl := le.Uint32(b), le.Uint32(b[4:])
	if uint64(nr) > uint64(maxRecs) {
		return dst, fmt.Errorf("parse output: %d records for %d events, limit %d", nr, n, maxRecs)
	}
	if want := recordsHeader + uint64(nr)*recordSize + uint64(tl); want != uint64(len(b)) {
		return dst, fmt.Errorf("parse output: %d records and %d text bytes need %d bytes, the module returned %d", nr, tl, want, len(b))
	}
	capt := b[recordsHeader+nr*recordSize:]
	start := len(dst)
	prev := first
	var used uint64
	for i := uint32(0); i < nr; i++ {
		r := b[recordsHeader+i*recordSize:]
		k := r[0]
		if k > uint8(record.EventMeta) {
			return dst[:start], fmt.Errorf("parse output: record %d kind %d unknown (0..7)", i, k)
		}
		ev := le.Uint32(r[4:])
		if ev < prev || ev-first >= n {
			return dst[:start], fmt.Errorf("parse output: record %d for event %d, outside the batch %d..%d or out of order", i, ev, first, first+n-1)
		}
		prev = ev
		rec := adapter.Record{
			Kind: record.EventKind(k), Flags: adapter.RecordFlags(r[1]), Choice: le.Uint16(r[2:]), Event: ev,
			TextBytes: le.Uint32(r[8:]), Tokens: le.Uint32(r[12:]), Aux0: le.Uint32(r[16:]), Aux1: le.Uint32(r[20:]),
		}
		if rec.Flags&adapter.RecordTextCaptured != 0 {
			end := used + uint64(rec.TextBytes)
			if end > uint64(len(capt)) {
				return dst[:start], fmt.Errorf("parse output: record %d captures %d text bytes, only %d left", i, rec.TextBytes, uint64(len(capt))-used)
			}
			t := capt[used:end]
			used = end
			if text != nil {
				switch {
				case rec.Kind != record.EventContent && rec.Kind != record.EventReasoning,
					rec.Flags&adapter.RecordRefusal != 0:
				case rec.Choice != 0:
					*other = append(*other, t...)
				case rec.Kind == record.EventContent:
					*text = append(*text, t...)
				default:
					*reasoning = append(*reasoning, t...)
				}
			}
		}
		dst = append(dst, rec)
	}
	if used != uint64(len(capt)) {
		return dst[:start], fmt.Errorf("parse output: %d captured text bytes, records account for %d", len(capt), used)
	}
	return dst, nil
}

// appendRecords encodes records and captured text as rp_parse output
// (tests and oracles).
func appendRecords(dst []byte, recs []adapter.Record, text []byte) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, uint32(len(recs)))
	dst = le.AppendUint32(dst, uint32(len(text)))
	for _, r := range recs {
		dst = append(dst, uint8(r.Kind), uint8(r.Flags))
		dst = le.AppendUint16(dst, r.Choice)
		dst = le.AppendUint32(dst, r.Event)
		dst = le.AppendUint32(dst, r.TextBytes)
		dst = le.AppendUint32(dst, r.Tokens)
		dst = le.AppendUint32(dst, r.Aux0)
		dst = le.AppendUint32(dst, r.Aux1)
	}
	return append(dst, text...)
}

// decodeFinal decodes rp_close output into fin, copying message and
// extras into the given buffers (which fin then references).
func decodeFinal(b []byte, fin *adapter.Final, msgBuf, extBuf *[]byte) error {
	le := binary.LittleEndian
	if len(b) < summaryFixedSize {
		return fmt.Errorf("close output: %d bytes, shorter than the %d-byte summary", len(b), summaryFixedSize)
	}
	sz := le.Uint32(b)
	if sz < summaryFixedSize || int64(sz) > int64(len(b)) {
		return fmt.Errorf("close output: struct_size %d, want >= %d and <= %d", sz, summaryFixedSize, len(b))
	}
	ml, xl := le.Uint32(b[36:]), le.Uint32(b[40:])
	if ml > maxMessage || xl > maxExtras {
		return fmt.Errorf("close output: message %d / extras %d bytes, limits %d / %d", ml, xl, maxMessage, maxExtras)
	}
	if uint64(sz)+uint64(ml)+uint64(xl) != uint64(len(b)) {
		return fmt.Errorf("close output: %d + %d + %d bytes declared, the module returned %d", sz, ml, xl, len(b))
	}
	f := adapter.FinishReason(le.Uint32(b[24:]))
	if f > adapter.FinishError {
		return fmt.Errorf("close output: finish code %d unknown (0..5)", f)
	}
	valid := le.Uint32(b[4:])
	if valid&^uint32(0x3f) != 0 {
		return fmt.Errorf("close output: valid bits %#x, only 0x3f defined", valid)
	}
	*msgBuf = append((*msgBuf)[:0], b[sz:sz+ml]...)
	*extBuf = append((*extBuf)[:0], b[sz+ml:sz+ml+xl]...)
	fin.Valid = valid
	fin.PromptTokens = le.Uint32(b[8:])
	fin.CompletionTokens = le.Uint32(b[12:])
	fin.ReasoningTokens = le.Uint32(b[16:])
	fin.CachedTokens = le.Uint32(b[20:])
	fin.FinishReason = f
	fin.Choices = le.Uint32(b[28:])
	fin.ErrorCode = le.Uint32(b[32:])
	fin.ErrorMessage = nil
	if ml > 0 {
		fin.ErrorMessage = *msgBuf
	}
	fin.Extras = nil
	if xl > 0 {
		fin.Extras = *extBuf
	}
	return nil
}

// appendFinal encodes fin as rp_close output (tests and oracles).
func appendFinal(dst []byte, fin *adapter.Final) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, summaryFixedSize)
	dst = le.AppendUint32(dst, fin.Valid)
	dst = le.AppendUint32(dst, fin.PromptTokens)
	dst = le.AppendUint32(dst, fin.CompletionTokens)
	dst = le.AppendUint32(dst, fin.ReasoningTokens)
	dst = le.AppendUint32(dst, fin.CachedTokens)
	dst = le.AppendUint32(dst, uint32(fin.FinishReason))
	dst = le.AppendUint32(dst, fin.Choices)
	dst = le.AppendUint32(dst, fin.ErrorCode)
	dst = le.AppendUint32(dst, uint32(len(fin.ErrorMessage)))
	dst = le.AppendUint32(dst, uint32(len(fin.Extras)))
	dst = le.AppendUint32(dst, 0)
	dst = append(dst, fin.ErrorMessage...)
	return append(dst, fin.Extras...)
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
