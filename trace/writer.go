package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// Writer writes Rows as Mooncake or Bailian JSONL, the formats reprise
// synthesize emits. The output reads back with the same reader to the same
// rows (FuzzWriterRoundTrip). A Writer is not safe for concurrent use; call
// Flush when done.
//
// Mooncake lines carry AIPerf's incremental session turns: Write refuses a
// Cumulative row with a SessionID and no Raw content.
//
// Mooncake lines carry timestamp (ms, when HasOffset) or else delay (ms,
// when HasDelay), session_id (when set), input_length and output_length
// (when > 0), hash_ids (when non-nil) and the members of Raw (when it is a
// JSON object) verbatim; a row whose Raw holds its input (text_input,
// messages, payload) gets no input_length, hash_ids or template_tokens,
// and a row's media parts travel as Raw's "media". Strings are escaped as encoding/json does
// (invalid UTF-8 becomes U+FFFD). Fractional milliseconds are written as
// exact decimals (1.5 ms → 1.5).
//
// Bailian lines carry chat_id (RequestID, or the row's position when
// RequestID < 0), parent_chat_id (ParentID), timestamp (seconds, exact
// decimal), time_to_parent_chat (Delay, when HasDelay), input_length,
// output_length, type (Kind, when set),
// turn (Turn+1, 1-based) and hash_ids.
type Writer struct {
	w      *bufio.Writer
	format Format
	buf    []byte
	n      int64
}

// NewWriter returns a Writer of format f (FormatMooncake or FormatBailian)
// to w.
func NewWriter(w io.Writer, f Format) (*Writer, error) {
	if f != FormatMooncake && f != FormatBailian {
		return nil, fmt.Errorf("trace writer: format %q is not writable; use %s or %s", f, FormatMooncake, FormatBailian)
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), format: f}, nil
}

// Write writes one row. It does not keep row. It allocates only when the
// line is longer than any before.
func (w *Writer) Write(row *Row) error {
	if row.Offset < 0 || row.Delay < 0 {
		return fmt.Errorf("trace writer: row %d: negative offset or delay", row.Index)
	}
	if row.InputTokens < 0 || row.OutputTokens < 0 {
		return fmt.Errorf("trace writer: row %d: negative token count", row.Index)
	}
	b := w.buf[:0]
	if w.format == FormatBailian {
		b = appendBailian(b, row, w.n)
	} else {
		var err error
		if b, err = appendMooncake(b, row); err != nil {
			return err
		}
	}
	b = append(b, '}', '\n')
	w.buf = b
	w.n++
	_, err := w.w.Write(b)
	return err
}

// appendBailian appends the Bailian line of row, the n-th written, to b,
// less its closing brace.
func appendBailian(b []byte, row *Row, n int64) []byte {
	id := row.RequestID
	if id < 0 {
		id = n
	}
	b = append(b, `{"chat_id": `...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `, "parent_chat_id": `...)
	b = strconv.AppendInt(b, row.ParentID, 10)
	b = append(b, `, "timestamp": `...)
	b = appendDecimal(b, int64(row.Offset), 9)
	if row.HasDelay {
		b = append(b, `, "time_to_parent_chat": `...)
		b = appendDecimal(b, int64(row.Delay), 9)
	}
	b = append(b, `, "input_length": `...)
	b = strconv.AppendInt(b, int64(row.InputTokens), 10)
	b = append(b, `, "output_length": `...)
	b = strconv.AppendInt(b, int64(row.OutputTokens), 10)
	if row.Kind != "" {
		b = append(b, `, "type": `...)
		b = jsonx.AppendString(b, row.Kind)
	}
	b = append(b, `, "turn": `...)
	b = strconv.AppendInt(b, int64(row.Turn)+1, 10)
	if row.HashIDs != nil {
		b = append(b, `, "hash_ids": `...)
		b = appendIDList(b, row.HashIDs)
	}
	return b
}

// appendKey appends the key name of a member of the JSON object that
// starts at b[0], after a separator unless it is the first.
func appendKey(b []byte, name string) []byte {
	if len(b) > 1 {
		b = append(b, ", "...)
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, `": `...)
}

// appendMooncake appends the Mooncake line of row to b, which must be
// empty (appendKey counts from b[0]), less its closing brace. It refuses
// a row the reader would read back otherwise.
func appendMooncake(b []byte, row *Row) ([]byte, error) {
	extends := !row.Cumulative && row.ParentID >= 0 && row.WaitFor != nil && len(row.Raw) == 0
	agentic := (row.Cumulative || extends) && len(row.Raw) == 0 && (row.RequestID >= 0 || row.WaitFor != nil)
	if row.Cumulative && row.SessionID != "" && len(row.Raw) == 0 && !agentic {
		// A Mooncake session line holds its turn's new tokens (AIPerf's
		// dialect); a replay appends the history. Writing a context
		// here would count the history twice.
		return b, fmt.Errorf("trace writer: row %d: its input_length holds the session's history (cumulative), but a Mooncake session line holds only its turn's new tokens; write Bailian, or convert with synth.Incremental", row.Index)
	}
	inner, sized := rawContent(row)
	if row.InputTokens == 0 && inner == nil {
		return b, fmt.Errorf("trace writer: row %d has neither input tokens nor Raw content", row.Index)
	}
	b = append(b, '{')
	if row.HasOffset {
		b = appendKey(b, "timestamp")
		b = appendDecimal(b, int64(row.Offset), 6)
	} else if row.HasDelay {
		b = appendKey(b, "delay")
		b = appendDecimal(b, int64(row.Delay), 6)
	}
	if row.SessionID != "" {
		b = appendKey(b, "session_id")
		b = jsonx.AppendString(b, row.SessionID)
	}
	if sized {
		b = appendSized(b, row)
	} else if row.OutputTokens > 0 {
		b = appendKey(b, "output_length")
		b = strconv.AppendInt(b, int64(row.OutputTokens), 10)
	}
	if row.Endpoint != "" {
		b = appendKey(b, "endpoint")
		b = jsonx.AppendString(b, row.Endpoint)
	}
	if agentic {
		b = appendAgentic(b, row, extends)
	}
	if row.ToolWait > 0 {
		b = appendKey(b, "tool_wait_ms")
		b = appendDecimal(b, int64(row.ToolWait), 6)
	}
	if inner != nil {
		if len(b) > 1 {
			b = append(b, ", "...)
		}
		b = append(b, inner...)
	}
	return b, nil
}

// appendSized appends the members of a Mooncake line whose Raw does not
// hold its input: input_length, output_length (when > 0), template_tokens
// (when > 0), hash_ids (when non-nil) and a block_size other than the
// default.
func appendSized(b []byte, row *Row) []byte {
	b = appendKey(b, "input_length")
	b = strconv.AppendInt(b, int64(row.InputTokens), 10)
	if row.OutputTokens > 0 {
		b = appendKey(b, "output_length")
		b = strconv.AppendInt(b, int64(row.OutputTokens), 10)
	}
	if row.TemplateTokens > 0 {
		b = appendKey(b, "template_tokens")
		b = strconv.AppendInt(b, int64(row.TemplateTokens), 10)
	}
	if row.HashIDs != nil {
		b = appendKey(b, "hash_ids")
		b = appendIDList(b, row.HashIDs)
		if row.BlockSize > 0 && row.BlockSize != FormatMooncake.DefaultBlockSize() {
			// Read back without it, the ids would be checked at 512.
			b = appendKey(b, "block_size")
			b = strconv.AppendInt(b, int64(row.BlockSize), 10)
		}
	}
	return b
}

// appendAgentic appends the dependency members of an agentic Mooncake
// line: request_id, wait_for and, when extends, extends.
func appendAgentic(b []byte, row *Row, extends bool) []byte {
	if row.RequestID >= 0 {
		b = appendKey(b, "request_id")
		b = appendRequestID(b, row.RequestID)
	}
	if row.WaitFor != nil {
		b = appendKey(b, "wait_for")
		b = append(b, '[')
		for k, id := range row.WaitFor {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = appendRequestID(b, id)
		}
		b = append(b, ']')
	}
	if extends {
		b = appendKey(b, "extends")
		b = appendRequestID(b, row.ParentID)
	}
	return b
}

// Flush writes buffered lines to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

func appendIDList(b []byte, ids []uint64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendUint(b, id, 10)
	}
	return append(b, ']')
}

// appendDecimal writes v·10^−scale exactly, without trailing zeros:
// appendDecimal(b, 1500000, 6) is "1.5".
func appendDecimal(b []byte, v int64, scale int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	p := int64(pow10[scale])
	b = strconv.AppendInt(b, v/p, 10)
	frac := v % p
	if frac == 0 {
		return b
	}
	var digits [19]byte
	s := strconv.AppendInt(digits[:0], frac+p, 10)[1:] // zero-padded
	n := len(s)
	for n > 0 && s[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, s[:n]...)
}

// rawMembers returns the members of the JSON object raw without its
// braces, or nil when raw is not a non-empty object.
func rawMembers(raw []byte) []byte {
	i := skipWS(raw, 0)
	j := len(raw)
	for j > i && (raw[j-1] == ' ' || raw[j-1] == '\n' || raw[j-1] == '\t' || raw[j-1] == '\r') {
		j--
	}
	if i >= j || raw[i] != '{' || raw[j-1] != '}' {
		return nil
	}
	inner := raw[i+1 : j-1]
	if skipWS(inner, 0) == len(inner) {
		return nil
	}
	return inner
}

// rawContent returns the members of row's Raw object, and whether the
// line gets input_length, hash_ids and template_tokens: not when Raw is
// the row's input (text_input, messages, payload), since a Mooncake line
// holds one input and its reader counts the tokens of the text again.
func rawContent(row *Row) (inner []byte, sized bool) {
	inner = rawMembers(row.Raw)
	return inner, row.InputTokens > 0 && !rawHasInput(inner)
}

// rawHasInput reports whether the members of a Raw object include one of
// a Mooncake line's inputs (text_input, messages, payload) at the top
// level.
func rawHasInput(inner []byte) bool {
	if inner == nil || !bytes.Contains(inner, []byte(`"text_input"`)) && !bytes.Contains(inner, []byte(`"messages"`)) && !bytes.Contains(inner, []byte(`"payload"`)) {
		return false
	}
	var in struct {
		TextInput json.RawMessage `json:"text_input"`
		Messages  json.RawMessage `json:"messages"`
		Payload   json.RawMessage `json:"payload"`
	}
	obj := make([]byte, 0, len(inner)+2)
	obj = append(append(append(obj, '{'), inner...), '}')
	if json.Unmarshal(obj, &in) != nil {
		return false
	}
	return in.TextInput != nil || in.Messages != nil || in.Payload != nil
}

// appendRequestID writes an agentic row's request id as an integer,
// which reads back to the same RequestID (a string id read as 2^62 + its
// hash is written as that number).
func appendRequestID(b []byte, id int64) []byte {
	return strconv.AppendInt(b, id, 10)
}
