package trace

// Hot path: Mooncake and Bailian rows; allocation test TestNextAllocs in
// alloc_test.go, benchmark BenchmarkMooncakeDecode.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Bits of jsonFields.has.
const (
	hTimestamp = 1 << iota
	hCreated
	hDelay
	hInput
	hInputAlias
	hOutput
	hOutputAlias
	hIDs
	hSession
	hChat
	hParent
	hTurn
	hType
	hTTP
	hTextInput
	hMessages
	hTools
	hPayload
	hExtra
	hHeaders
	hRequestID
	hWaitFor
	hToolWait
	hExtends
	hBlockSize
	hEndpoint
	hTemplate
	hMedia
)

// extKeys are the AIPerf extension keys carried verbatim in Row.Raw, with
// their has bit and the JSON type they must have.
var extKeys = [...]struct {
	name string
	bit  uint32
	typ  byte // first byte of a valid value
}{
	{"text_input", hTextInput, '"'},
	{"messages", hMessages, '['},
	{"tools", hTools, '['},
	{"payload", hPayload, '{'},
	{"extra", hExtra, '{'},
	{"headers", hHeaders, '{'},
	// reprise's own: the chat content parts of a row's images, audio and
	// video, as the readers of media rows put them in Raw (design 0022)
	// and synthesize writes them.
	{"media", hMedia, '['},
}

// jsonFields holds the raw fields of one Mooncake/Bailian line. Value
// slices alias the line.
type jsonFields struct {
	has        uint32
	timestamp  []byte // timestamp or created_time
	delay      []byte
	input      []byte
	output     []byte
	idsErr     string // why hash_ids did not parse
	session    []byte // decoded
	chat       []byte
	parent     []byte
	turn       []byte
	typ        []byte // decoded
	ttp        []byte // time_to_parent_chat
	requestID  []byte // request_id
	waitFor    []byte // wait_for
	toolWait   []byte // tool_wait_ms
	extends    []byte // extends
	blockSize  []byte // block_size
	endpoint   []byte // endpoint
	template   []byte // template_tokens
	ext        [len(extKeys)][]byte
	dupAliases string // first alias clash seen, for the message
}

// jsonlDecoder decodes Mooncake and Bailian JSONL.
type jsonlDecoder struct {
	r        *Reader
	bailian  bool
	f        jsonFields
	sessions *sessions
	// chats maps a Bailian chat_id to its session (root chat_id as a
	// string) and depth; it grows with the number of rows.
	chats map[int64]chatNode
	// reqs maps an agentic row's RequestID to its line; it grows with
	// the rows that have one.
	reqs    map[int64]int64
	waitBuf []int64
	// refused maps the RequestID of an agentic row that was refused (a
	// row error) to its line and why, so that a row waiting for it says
	// so; it grows with the refused rows that have a request_id.
	refused map[int64]refusal
}

// refusal is why an agentic row was refused.
type refusal struct {
	line   int64
	reason string
}

// maxRefusalReason bounds the reason kept of a refused row.
const maxRefusalReason = 300

// stringIDBase is the smallest RequestID of a request_id that is a
// string other than decimal digits (see requestID).
const stringIDBase = 1 << 62

type chatNode struct {
	session string
	depth   int32
}

func newJSONLDecoder(r *Reader) *jsonlDecoder {
	d := &jsonlDecoder{r: r, bailian: r.format == FormatBailian, sessions: newSessions()}
	if d.bailian {
		d.chats = make(map[int64]chatNode)
	}
	return d
}

func (d *jsonlDecoder) next(row *Row) error {
	lr := &d.r.lr
	for {
		line, err := d.r.nextRow(row)
		if err != nil {
			return err
		}
		if err := d.scan(line, row); err != nil {
			return d.r.fileErr(lr.line, "", err)
		}
		if d.bailian {
			return d.bailianRow(row)
		}
		if err := d.mooncakeRow(row); err != nil {
			d.refuse(err)
			return err
		}
		return nil
	}
}

// refuse remembers the request_id of the row just refused with err, if it
// has one it did not record.
func (d *jsonlDecoder) refuse(err error) {
	if d.f.has&hRequestID == 0 {
		return
	}
	id, _, ok := requestID(d.f.requestID)
	if !ok {
		return
	}
	if _, recorded := d.reqs[id]; recorded {
		return
	}
	reason := err.Error()
	if pe, ok := errors.AsType[*ParseError](err); ok {
		reason = pe.Err.Error()
		if pe.Field != "" {
			reason = pe.Field + ": " + reason
		}
	}
	if len(reason) > maxRefusalReason {
		reason = reason[:maxRefusalReason] + "…"
	}
	if d.refused == nil {
		d.refused = map[int64]refusal{}
	}
	d.refused[id] = refusal{line: d.r.lr.line, reason: reason}
}

// unknownParent is the error of a row whose field (wait_for, extends)
// names request key, id, that no earlier line recorded: refused, or
// never there.
func (d *jsonlDecoder) unknownParent(field string, id int64, key []byte, must string) error {
	if r, ok := d.refused[id]; ok {
		return d.rowErr(field, "request %q (line %d) was refused: %s; fix that row, and this one reads", key, r.line, r.reason)
	}
	return d.rowErr(field, "request %q is not the request_id of an earlier line; a row may only %s rows above it", key, must)
}

// scan splits line into d.f. It is the hand-rolled equivalent of
// decoding the object with encoding/json (TestScanOracle compares them).
//
// hash_ids are parsed straight into row.HashIDs; a malformed id list is
// kept in f.idsErr for the row check so the message names the field.
func (d *jsonlDecoder) scan(b []byte, row *Row) error {
	if d.scanMooncake(b, row) {
		return nil
	}
	return d.scanAll(b, row)
}

// scanAll is scan without its fast path: any line.
func (d *jsonlDecoder) scanAll(b []byte, row *Row) error {
	f := &d.f
	f.has = 0
	f.dupAliases = ""
	f.idsErr = ""
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return &jsonSyntax{i, "want a JSON object per line"}
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			var err error
			if i, err = d.scanMember(b, i, row); err != nil {
				return err
			}
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return &jsonSyntax{i, "want ',' or '}'"}
		}
	}
	if skipWS(b, i) != len(b) {
		return &jsonSyntax{i, "data after the object; one JSON object per line"}
	}
	f.aliases()
	return nil
}

// scanMember scans the object member, key and value, that starts at b[i]
// into d.f (hash_ids straight into row.HashIDs) and returns the index of
// what follows it, past white space.
func (d *jsonlDecoder) scanMember(b []byte, i int, row *Row) (int, error) {
	f := &d.f
	if i >= len(b) || b[i] != '"' {
		return 0, &jsonSyntax{i, "want a key"}
	}
	kend, kc, err := scanString(b, i)
	if err != nil {
		return 0, err
	}
	key := b[i+1 : kend-1]
	if kc {
		key = stringValue(b, i, kend, kc)
	}
	i = skipWS(b, kend)
	if i >= len(b) || b[i] != ':' {
		return 0, &jsonSyntax{i, "want ':'"}
	}
	vs := skipWS(b, i+1)
	if string(key) == "hash_ids" && vs < len(b) && b[vs] == '[' {
		f.has |= hIDs
		f.idsErr = ""
		var end int
		row.HashIDs, end, f.idsErr = appendIDs(d.r.idsBuf[:0], b, vs)
		d.r.idsBuf = row.HashIDs[:0]
		if f.idsErr == "" {
			return skipWS(b, end), nil
		}
	}
	ve, err := skipValue(b, vs, 1)
	if err != nil {
		return 0, err
	}
	f.set(key, b[vs:ve])
	return skipWS(b, ve), nil
}

// set records v, the value of key, in f. An unknown key is ignored.
func (f *jsonFields) set(key, v []byte) {
	switch string(key) {
	case "timestamp":
		f.has |= hTimestamp
		f.timestamp = v
	case "created_time":
		f.has |= hCreated
		if f.has&hTimestamp == 0 {
			f.timestamp = v
		}
	case "delay":
		f.has |= hDelay
		f.delay = v
	case "input_length":
		f.has |= hInput
		f.input = v
	case "input_tokens":
		f.has |= hInputAlias
		if f.has&hInput == 0 {
			f.input = v
		}
	case "output_length":
		f.has |= hOutput
		f.output = v
	case "output_tokens":
		f.has |= hOutputAlias
		if f.has&hOutput == 0 {
			f.output = v
		}
	case "hash_ids":
		f.has |= hIDs
		if f.idsErr == "" {
			f.idsErr = "want an array of integers"
		}
	case "session_id":
		f.has |= hSession
		f.session = v
	case "chat_id":
		f.has |= hChat
		f.chat = v
	case "parent_chat_id":
		f.has |= hParent
		f.parent = v
	case "turn":
		f.has |= hTurn
		f.turn = v
	case "type":
		f.has |= hType
		f.typ = v
	case "time_to_parent_chat":
		f.has |= hTTP
		f.ttp = v
	case "request_id":
		f.has |= hRequestID
		f.requestID = v
	case "wait_for":
		f.has |= hWaitFor
		f.waitFor = v
	case "tool_wait_ms":
		f.has |= hToolWait
		f.toolWait = v
	case "extends":
		f.has |= hExtends
		f.extends = v
	case "block_size":
		f.has |= hBlockSize
		f.blockSize = v
	case "endpoint":
		f.has |= hEndpoint
		f.endpoint = v
	case "template_tokens":
		f.has |= hTemplate
		f.template = v
	default:
		for k := range extKeys {
			if string(key) == extKeys[k].name {
				f.has |= extKeys[k].bit
				f.ext[k] = v
			}
		}
	}
}

// aliases settles the alias keys after a scan: the canonical key wins
// when both are present (its value was kept), but a clash is noted in
// dupAliases, an error reported by the row check; an alias alone counts
// as its canonical key.
func (f *jsonFields) aliases() {
	switch {
	case f.has&hTimestamp != 0 && f.has&hCreated != 0:
		f.dupAliases = "timestamp and created_time"
	case f.has&hInput != 0 && f.has&hInputAlias != 0:
		f.dupAliases = "input_length and input_tokens"
	case f.has&hOutput != 0 && f.has&hOutputAlias != 0:
		f.dupAliases = "output_length and output_tokens"
	}
	if f.has&hInputAlias != 0 {
		f.has |= hInput
	}
	if f.has&hOutputAlias != 0 {
		f.has |= hOutput
	}
	if f.has&hCreated != 0 {
		f.has |= hTimestamp
	}
}

// The keys of a Mooncake row as the published traces write them, each with
// what precedes it and the separator after it.
const (
	mooncakeTimestamp = `{"timestamp": `
	mooncakeInput     = `, "input_length": `
	mooncakeOutput    = `, "output_length": `
	mooncakeIDs       = `, "hash_ids": `
)

// scanMooncake is scan's fast path for the line every row of the published
// Mooncake traces is, byte for byte in this shape:
//
//	{"timestamp": T, "input_length": I, "output_length": O, "hash_ids": [ids]}
//
// with T, I and O unsigned integers without a leading zero and the ids as
// appendIDs reads them. It fills d.f and row exactly as scan does and
// reports true, or reports false for any other line (other keys, order or
// spacing, other numbers, an error), which scan then reads in full: d.f and
// row.HashIDs are set again there. TestScanMooncakeMatchesScan compares the
// two.
func (d *jsonlDecoder) scanMooncake(b []byte, row *Row) bool {
	i, ok := len(mooncakeTimestamp), hasAt(b, 0, mooncakeTimestamp)
	if !ok {
		return false
	}
	var ts, in, out []byte
	if ts, i, ok = plainUint(b, i, mooncakeInput); !ok {
		return false
	}
	if in, i, ok = plainUint(b, i, mooncakeOutput); !ok {
		return false
	}
	if out, i, ok = plainUint(b, i, mooncakeIDs); !ok {
		return false
	}
	ids, end, msg := appendIDs(d.r.idsBuf[:0], b, i)
	if msg != "" || end != len(b)-1 || b[end] != '}' {
		return false
	}
	row.HashIDs, d.r.idsBuf = ids, ids[:0]
	f := &d.f
	f.has = hTimestamp | hInput | hOutput | hIDs
	f.dupAliases, f.idsErr = "", ""
	f.timestamp, f.input, f.output = ts, in, out
	return true
}

// hasAt reports whether b holds s at i.
func hasAt(b []byte, i int, s string) bool {
	return i <= len(b) && len(b)-i >= len(s) && string(b[i:i+len(s)]) == s
}

// plainUint returns the unsigned integer without a leading zero (a valid
// JSON number) at b[i:] that next follows, and the index after next; ok is
// false when there is none.
func plainUint(b []byte, i int, next string) (v []byte, after int, ok bool) {
	j := i
	for j+8 <= len(b) { // 8 bytes at a time
		n := leadingDigits8(binary.LittleEndian.Uint64(b[j:]))
		j += n
		if n < 8 {
			break
		}
	}
	for j+8 > len(b) && j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || b[i] == '0' && j-i > 1 || !hasAt(b, j, next) {
		return nil, 0, false
	}
	return b[i:j], j + len(next), true
}

// rowErr returns a row error for field on the current line.
func (d *jsonlDecoder) rowErr(field, format string, args ...any) error {
	return d.r.fileErr(d.r.lr.line, field, fmt.Errorf(format, args...))
}

// jsonString decodes a JSON string value or reports why not.
func jsonString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	end, complex, err := scanString(v, 0)
	if err != nil || end != len(v) {
		return nil, false
	}
	return stringValue(v, 0, end, complex), true
}

// timeValue converts a JSON number of units (scale = log10 ns per unit)
// to a non-negative duration.
func (d *jsonlDecoder) timeValue(field string, v []byte, scale int, unit string) (time.Duration, error) {
	ns, st := parseFixed(v, scale)
	switch {
	case st == fixedSyntax:
		return 0, d.rowErr(field, "%s is not a number; want %s", v, unit)
	case st == fixedRange:
		return 0, d.rowErr(field, "%s %s is out of range (over 292 years)", v, unit)
	case ns < 0:
		return 0, d.rowErr(field, "%s is negative; want %s ≥ 0 from the trace start", v, unit)
	}
	return time.Duration(ns), nil
}

// input parses an input length field: a count ≥ 1 within the Reader's
// input cap (Options.MaxInputTokens).
func (d *jsonlDecoder) input(field string, v []byte) (int, error) {
	n, err := d.count(field, v, 1)
	if err != nil {
		return 0, err
	}
	if err := d.r.overInput(n); err != nil {
		return 0, d.r.fileErr(d.r.lr.line, field, err)
	}
	return n, nil
}

// count parses a token count field that must be ≥ min.
func (d *jsonlDecoder) count(field string, v []byte, min int) (int, error) {
	n, msg := parseCount(v)
	if msg != "" {
		return 0, d.rowErr(field, "%s: %s; want a whole number of tokens", v, msg)
	}
	if n < min {
		return 0, d.rowErr(field, "%d tokens; must be ≥ %d (fix the row, or pass --skip-invalid to drop such rows)", n, min)
	}
	return n, nil
}

func (d *jsonlDecoder) int64Field(field string, v []byte) (int64, error) {
	n, st := parseFixed(v, 0)
	if st != fixedOK {
		return 0, d.rowErr(field, "%s is not an integer", v)
	}
	return n, nil
}

// hashIDs parses f.ids into row.HashIDs and checks the count against the
// input length: with k ids, (k−1)·B < input_length ≤ k·B.
func (d *jsonlDecoder) hashIDs(row *Row) error {
	if d.f.idsErr != "" {
		return d.rowErr("hash_ids", "%s", d.f.idsErr)
	}
	b := d.r.block
	k := len(row.HashIDs)
	need := (row.InputTokens + b - 1) / b
	if k != need && !d.r.opts.FitHashIDs {
		ids := "ids"
		if k == 1 {
			ids = "id"
		}
		return d.rowErr("hash_ids", "%d %s but input_length %d needs %d at block size %d; fix the row, pass --block-size with the block size the trace was hashed with, or --hash-mismatch fit to use the ids that fit",
			k, ids, row.InputTokens, need, b)
	}
	return nil
}

// mooncakeRow checks d.f as a Mooncake (AIPerf-extended) row.
func (d *jsonlDecoder) mooncakeRow(row *Row) error {
	f := &d.f
	d.r.payload = f.has&hPayload != 0
	if f.dupAliases != "" {
		return d.rowErr("", "%s are the same field; keep one", f.dupAliases)
	}
	if err := d.recorded(row); err != nil {
		return err
	}
	row.BlockSize = d.r.block
	if f.has&hTimestamp != 0 {
		if f.has&hDelay != 0 {
			return d.rowErr("delay", "timestamp and delay are exclusive: keep timestamp for an absolute arrival or delay for think time after the previous turn")
		}
		t, err := d.timeValue("timestamp", f.timestamp, 6, "milliseconds")
		if err != nil {
			return err
		}
		row.Offset, row.HasOffset = t, true
	} else if f.has&hDelay != 0 {
		t, err := d.timeValue("delay", f.delay, 6, "milliseconds")
		if err != nil {
			return err
		}
		row.Delay, row.HasDelay = t, true
	}
	if f.has&hOutput != 0 {
		n, err := d.count("output_length", f.output, 1)
		if err != nil {
			return err
		}
		row.OutputTokens = n
	}
	modes := f.has & (hInput | hTextInput | hMessages | hPayload)
	if modes == 0 {
		return d.rowErr("input_length", "missing; a Mooncake row needs input_length (with hash_ids) or one of text_input, messages, payload")
	}
	if modes&(modes-1) != 0 {
		return d.rowErr("", "more than one input among input_length, text_input, messages and payload; keep exactly one per row")
	}
	if f.has&hInput != 0 {
		n, err := d.input("input_length", f.input)
		if err != nil {
			return err
		}
		row.InputTokens = n
		if f.has&hIDs != 0 {
			if err := d.hashIDs(row); err != nil {
				return err
			}
		}
	} else if f.has&hIDs != 0 {
		return d.rowErr("hash_ids", "only allowed together with input_length")
	}
	if f.has&hTemplate != 0 {
		if f.has&hInput == 0 {
			return d.rowErr("template_tokens", "only allowed together with input_length")
		}
		n, err := d.count("template_tokens", f.template, 0)
		if err != nil {
			return err
		}
		if n >= row.InputTokens {
			return d.rowErr("template_tokens", "%d tokens of input_length %d: the template leaves no prompt; want fewer than input_length", n, row.InputTokens)
		}
		row.TemplateTokens = n
	}
	if f.has&hTools != 0 && f.has&hMessages == 0 {
		return d.rowErr("tools", "only allowed together with messages")
	}
	if f.has&(hTextInput|hMessages|hTools|hPayload|hExtra|hHeaders|hMedia) != 0 {
		if err := d.raw(row); err != nil {
			return err
		}
		if f.has&hMedia != 0 {
			if err := countMediaParts(&row.Media, f.ext[len(extKeys)-1], d.r.opts.MediaLimits); err != nil {
				return d.rowErr("media", "%v", err)
			}
			row.Images = row.Media.Images
		}
		// messages and payload rows are complete requests: a replay
		// sends them as they are, without adding history.
		row.Cumulative = f.has&(hMessages|hPayload) != 0
	}
	if f.has&hSession != 0 {
		s, ok := jsonString(f.session)
		if !ok {
			return d.rowErr("session_id", "%.40s is not a string", f.session)
		}
		if len(s) > 0 { // "" = no session, as when the key is absent
			row.SessionID, row.Turn = d.sessions.turn(s)
		}
	}
	if f.has&hToolWait != 0 {
		t, err := d.timeValue("tool_wait_ms", f.toolWait, 6, "milliseconds")
		if err != nil {
			return err
		}
		row.ToolWait = t
	}
	if f.has&(hRequestID|hWaitFor|hExtends) != 0 {
		return d.agentic(row)
	}
	return nil
}

// Endpoints a Mooncake row's endpoint key names: the request kind a
// recording proxy saw (docs/format/traces.md, "Recording").
const (
	EndpointChat        = "chat"
	EndpointCompletions = "completions"
)

// fileBlockSize returns the block size a Mooncake file declares on its
// first line (block_size), or 0 when it declares none or d cannot read it
// (the row check reports why).
func (d *jsonlDecoder) fileBlockSize(first []byte) int {
	var row Row
	if d.scan(first, &row) != nil || d.f.has&hBlockSize == 0 {
		return 0
	}
	n, msg := parseCount(d.f.blockSize)
	if msg != "" || n < 1 {
		return 0
	}
	return n
}

// recorded checks the keys a recording writes on a Mooncake row:
// block_size, which must be the file's (its first line's, unless
// Options.BlockSize overrides it), and endpoint, which must be one the
// Reader accepts (Options.Endpoint).
func (d *jsonlDecoder) recorded(row *Row) error {
	f := &d.f
	if f.has&hBlockSize != 0 {
		n, msg := parseCount(f.blockSize)
		if msg != "" || n < 1 {
			return d.rowErr("block_size", "%.40s: want a whole number of tokens ≥ 1", f.blockSize)
		}
		if n != d.r.block && d.r.opts.BlockSize == 0 {
			return d.rowErr("block_size", "%d, but the file's block size is %d (its first row's, or the default when that row has none); a trace has one block size: fix the row, or pass --block-size", n, d.r.block)
		}
	}
	if f.has&hEndpoint != 0 {
		s, ok := jsonString(f.endpoint)
		if !ok || (string(s) != EndpointChat && string(s) != EndpointCompletions) {
			return d.rowErr("endpoint", "%.40s: want %q or %q", f.endpoint, EndpointChat, EndpointCompletions)
		}
		row.Endpoint = d.sessions.intern(s)
		if want := d.r.opts.Endpoint; want != "" && row.Endpoint != want {
			return d.rowErr("endpoint", "recorded through %s, but this run sends %s requests: replay with --endpoint %s (a trace recording both kinds replays one kind per run: add --skip-invalid to leave out the rows of the other)",
				row.Endpoint, want, row.Endpoint)
		}
	}
	return nil
}

// agentic reads the keys of Dynamo's agentic Mooncake rows: request_id
// and wait_for (ids of rows on earlier lines that must complete first);
// tool_wait_ms is read by the caller. Such a row's input_length and
// hash_ids are its whole prompt (Cumulative). See requestID for how an
// id becomes a RequestID.
func (d *jsonlDecoder) agentic(row *Row) error {
	f := &d.f
	if f.has&(hTextInput|hMessages|hPayload) != 0 {
		return d.rowErr("request_id", "request_id and wait_for describe agentic rows with input_length; a row with text_input, messages or payload cannot have them")
	}
	row.Cumulative = true
	if d.reqs == nil {
		d.reqs = map[int64]int64{}
	}
	if f.has&hWaitFor != 0 {
		v := f.waitFor
		if v[0] != '[' {
			return d.rowErr("wait_for", "want an array of request ids (strings or integers)")
		}
		ids := d.waitBuf[:0]
		i := skipWS(v, 1)
		for i < len(v) && v[i] != ']' {
			e, err := skipValue(v, i, 2)
			if err != nil {
				return d.rowErr("wait_for", "want an array of request ids (strings or integers)")
			}
			id, key, ok := requestID(v[i:e])
			if !ok {
				return d.rowErr("wait_for", "%.40s is not a request id; want a string or a non-negative integer", v[i:e])
			}
			if _, seen := d.reqs[id]; !seen {
				return d.unknownParent("wait_for", id, key, "wait for")
			}
			if slices.Contains(ids, id) {
				return d.rowErr("wait_for", "request %q is listed twice", key)
			}
			ids = append(ids, id)
			i = skipWS(v, e)
			if i < len(v) && v[i] == ',' {
				i = skipWS(v, i+1)
			}
		}
		if len(ids) > 0 {
			row.WaitFor = ids
		}
		d.waitBuf = ids[:0]
	}
	if f.has&hExtends != 0 {
		// The row continues that request's conversation: its lengths are
		// the new tokens, sent after that request's prompt and live
		// response, and it waits for it.
		id, key, ok := requestID(f.extends)
		if !ok {
			return d.rowErr("extends", "%.40s is not a request id; want a string or a non-negative integer", f.extends)
		}
		if _, seen := d.reqs[id]; !seen {
			return d.unknownParent("extends", id, key, "extend")
		}
		if f.has&hInput == 0 {
			return d.rowErr("extends", "only allowed with input_length (the new tokens)")
		}
		row.ParentID, row.Cumulative = id, false
		if !slices.Contains(row.WaitFor, id) {
			row.WaitFor = append(row.WaitFor, id)
			d.waitBuf = row.WaitFor[:0]
		}
	}
	if f.has&hRequestID != 0 {
		id, key, ok := requestID(f.requestID)
		if !ok || len(key) == 0 {
			return d.rowErr("request_id", "%.40s is not a request id; want a non-empty string or a non-negative integer", f.requestID)
		}
		if line, dup := d.reqs[id]; dup {
			return d.rowErr("request_id", "%q names the same request as line %d; request ids are unique", key, line)
		}
		d.reqs[id] = d.r.lr.line
		row.RequestID = id
	}
	if row.RequestID < 0 && row.WaitFor == nil {
		// Only an empty wait_for: nothing makes the row agentic.
		row.Cumulative = false
	}
	return nil
}

// requestID returns the RequestID of a request_id or wait_for value: a
// non-negative integer (or a string of its decimal digits) is itself; any
// other string s is 2^62 + (FNV-1a(s) mod 2^62), so that a trace written
// back with integer ids reads to the same rows. key is the id's text.
func requestID(v []byte) (id int64, key []byte, ok bool) {
	key = v
	if len(v) > 0 && v[0] == '"' {
		if key, ok = jsonString(v); !ok {
			return 0, nil, false
		}
	}
	if n, ok := decimalID(key); ok {
		return n, key, true
	}
	if len(v) == 0 || v[0] != '"' || len(key) == 0 {
		return 0, nil, false
	}
	h := uint64(14695981039346656037)
	for _, c := range key {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return stringIDBase | int64(h&(stringIDBase-1)), key, true
}

// decimalID parses key as a non-negative int64 written in decimal without
// a sign or leading zeros.
func decimalID(key []byte) (int64, bool) {
	if len(key) == 0 || len(key) > 19 || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range key {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// raw builds row.Raw from the extension fields, verbatim.
func (d *jsonlDecoder) raw(row *Row) error {
	f := &d.f
	buf := append(d.r.rawBuf[:0], '{')
	for k, e := range extKeys {
		if f.has&e.bit == 0 {
			continue
		}
		v := f.ext[k]
		if v[0] != e.typ {
			want := map[byte]string{'"': "a string", '[': "an array", '{': "an object"}[e.typ]
			return d.rowErr(e.name, "want %s", want)
		}
		if (e.typ == '[' || e.typ == '{') && isEmptyContainer(v) && e.name != "extra" && e.name != "headers" {
			return d.rowErr(e.name, "is empty; give a non-empty value or drop the key")
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, e.name...)
		buf = append(buf, '"', ':')
		buf = append(buf, v...)
	}
	row.Raw = append(buf, '}')
	d.r.rawBuf = row.Raw[:0]
	return nil
}

func isEmptyContainer(v []byte) bool {
	i := skipWS(v, 1)
	return i < len(v) && (v[i] == ']' || v[i] == '}')
}

// bailianRow checks d.f as a Bailian row and resolves its session.
func (d *jsonlDecoder) bailianRow(row *Row) error {
	f := &d.f
	if f.dupAliases != "" {
		return d.rowErr("", "%s are the same field; keep one", f.dupAliases)
	}
	row.BlockSize = d.r.block
	row.Cumulative = true
	for _, req := range [...]struct {
		bit  uint32
		name string
	}{{hChat, "chat_id"}, {hTimestamp, "timestamp"}, {hInput, "input_length"}, {hOutput, "output_length"}} {
		if f.has&req.bit == 0 {
			return d.rowErr(req.name, "missing; a Bailian row needs chat_id, timestamp (seconds), input_length and output_length")
		}
	}
	chat, err := d.int64Field("chat_id", f.chat)
	if err != nil {
		return err
	}
	if chat < 0 {
		return d.rowErr("chat_id", "%d is negative; chat ids are ≥ 0 (parent_chat_id -1 marks a root)", chat)
	}
	row.RequestID = chat
	if f.has&hParent != 0 {
		if row.ParentID, err = d.int64Field("parent_chat_id", f.parent); err != nil {
			return err
		}
	}
	if row.Offset, err = d.timeValue("timestamp", f.timestamp, 9, "seconds"); err != nil {
		return err
	}
	row.HasOffset = true
	if f.has&hTTP != 0 {
		if row.Delay, err = d.timeValue("time_to_parent_chat", f.ttp, 9, "seconds"); err != nil {
			return err
		}
		row.HasDelay = true
	}
	if row.InputTokens, err = d.input("input_length", f.input); err != nil {
		return err
	}
	if row.OutputTokens, err = d.count("output_length", f.output, 1); err != nil {
		return err
	}
	if f.has&hIDs != 0 {
		if err := d.hashIDs(row); err != nil {
			return err
		}
	}
	if f.has&hType != 0 {
		s, ok := jsonString(f.typ)
		if !ok {
			return d.rowErr("type", "%.40s is not a string", f.typ)
		}
		row.Kind = d.sessions.intern(s)
	}
	turn := -1
	if f.has&hTurn != 0 {
		t, err := d.int64Field("turn", f.turn)
		if err != nil {
			return err
		}
		if t < 1 || t > 1<<30 {
			return d.rowErr("turn", "%d; Bailian turns are 1-based", t)
		}
		turn = int(t - 1)
	}
	// Session: the parent's session if the parent was seen earlier, else
	// this row is a root (an unseen parent ends the walk: orphan). Looking
	// only backwards makes the walk cycle-free.
	node := chatNode{}
	parent, ok := d.chats[row.ParentID]
	if row.ParentID >= 0 && row.ParentID != chat && ok {
		node = chatNode{session: parent.session, depth: parent.depth + 1}
	} else {
		if row.ParentID >= 0 {
			d.r.stats.Orphans++
			d.r.warn("orphan Bailian row", d.rowErr("parent_chat_id", "parent %d not seen on an earlier line; row starts its own session", row.ParentID))
		}
		node.session = strconv.FormatInt(chat, 10)
	}
	d.chats[chat] = node
	row.SessionID = node.session
	if turn >= 0 {
		row.Turn = turn
	} else {
		row.Turn = int(node.depth)
	}
	return nil
}

// sessions interns session ids and counts turns per session in file order.
// It grows with the number of distinct sessions.
type sessions struct {
	ids   map[string]int32 // id → index into turns
	names []string
	turns []int32
	kinds map[string]string
}

func newSessions() *sessions {
	return &sessions{ids: map[string]int32{}, kinds: map[string]string{}}
}

// turn returns the interned session id and the 0-based turn of this row.
func (s *sessions) turn(id []byte) (string, int) {
	if i, ok := s.ids[string(id)]; ok {
		s.turns[i]++
		return s.names[i], int(s.turns[i])
	}
	name := string(id)
	s.ids[name] = int32(len(s.names))
	s.names = append(s.names, name)
	s.turns = append(s.turns, 0)
	return name, 0
}

// intern returns a shared string for v (types and model names repeat).
func (s *sessions) intern(v []byte) string {
	if k, ok := s.kinds[string(v)]; ok {
		return k
	}
	if len(s.kinds) > 1<<16 {
		return string(v)
	}
	k := string(v)
	s.kinds[k] = k
	return k
}
