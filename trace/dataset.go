package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"
)

// nTableCols is the number of columns a table row is read from: prompt,
// input, output, session, timestamp, image, audio.
const nTableCols = 7

// tableCols is a table's columns resolved against its names: the index of
// each in the names (-1 absent) and the name used.
type tableCols struct {
	prompt, input, output, session, ts, image, audio int
	names                                            [nTableCols]string
}

// resolveColumns finds the columns of c among names (the header, the
// first object's keys, the Parquet schema). A named column that is
// missing is an error; so is a table with neither a prompt nor an input
// length column.
func resolveColumns(c Columns, names []string) (tableCols, error) {
	var t tableCols
	find := func(slot int, name, flag string, defaults []string) (int, error) {
		if name != "" {
			i := slices.Index(names, name)
			if i < 0 {
				return -1, fmt.Errorf("%w: no column %q (%s); the table has %s", ErrHeader, name, flag, quoteList(names))
			}
			t.names[slot] = name
			return i, nil
		}
		for _, d := range defaults {
			if i := slices.Index(names, d); i >= 0 {
				t.names[slot] = d
				return i, nil
			}
		}
		return -1, nil
	}
	var errs []error
	var err error
	if t.prompt, err = find(0, c.Prompt, "--prompt-column", promptColumns); err != nil {
		errs = append(errs, err)
	}
	if t.input, err = find(1, c.InputLength, "--input-len-column", inputLenColumns); err != nil {
		errs = append(errs, err)
	}
	if t.output, err = find(2, c.OutputLength, "--output-len-column", outputLenColumns); err != nil {
		errs = append(errs, err)
	}
	if t.session, err = find(3, c.Session, "--session-column", sessionColumns); err != nil {
		errs = append(errs, err)
	}
	if t.ts, err = find(4, c.Timestamp, "--timestamp-column", timestampColumns); err != nil {
		errs = append(errs, err)
	}
	if t.image, err = find(5, c.Image, "--image-column", imageColumns); err != nil {
		errs = append(errs, err)
	}
	if t.audio, err = find(6, c.Audio, "--audio-column", audioColumns); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return t, errors.Join(errs...)
	}
	if t.prompt < 0 && t.input < 0 {
		return t, fmt.Errorf("%w: no prompt column (%s) and no input length column (%s); the table has %s: name one with --prompt-column or --input-len-column",
			ErrHeader, strings.Join(promptColumns, ", "), strings.Join(inputLenColumns, ", "), quoteList(names))
	}
	return t, nil
}

// tableCell is one value of a table row: text (a string, or a number's
// digits) and whether it is present.
type tableCell struct {
	v   []byte
	set bool
}

// fillTableRow fills row from the cells of one table row (in tableCols
// order: prompt, input, output, session, timestamp, image, audio), or
// returns the row error with the column it is about.
func (r *Reader) fillTableRow(row *Row, t *tableCols, cells *[nTableCols]tableCell, s *sessions) error {
	line := row.Line
	parts := r.mediaBuf[:0]
	for _, m := range [...]struct {
		slot int
		kind media.Kind
	}{{5, media.Image}, {6, media.Audio}} {
		c := cells[m.slot]
		if !c.set || len(c.v) == 0 {
			continue
		}
		var err error
		if parts, err = r.appendMediaCell(parts, m.kind, c.v, line, t.names[m.slot], &row.Media); err != nil {
			return err
		}
	}
	r.mediaBuf = parts[:0]
	defer func() {
		if len(parts) > 0 {
			row.Images = row.Media.Images
			row.Raw = appendRawMedia(row.Raw, parts)
			r.rawBuf = row.Raw[:0]
		}
	}()
	if c := cells[1]; c.set && len(c.v) > 0 {
		n, msg := parseCount(c.v)
		if msg != "" {
			return r.fileErr(line, t.names[1], fmt.Errorf("%.40q is %s; want a whole number of tokens", c.v, msg))
		}
		if err := r.overInput(n); err != nil {
			return r.fileErr(line, t.names[1], err)
		}
		row.InputTokens = n
	}
	if c := cells[2]; c.set && len(c.v) > 0 {
		n, msg := parseCount(c.v)
		if msg != "" {
			return r.fileErr(line, t.names[2], fmt.Errorf("%.40q is %s; want a whole number of tokens", c.v, msg))
		}
		row.OutputTokens = n
	}
	if c := cells[4]; c.set && len(c.v) > 0 {
		ns, st := parseFixed(c.v, 6)
		switch {
		case st == fixedSyntax:
			return r.fileErr(line, t.names[4], fmt.Errorf("%.40q is not a number; want milliseconds", c.v))
		case st == fixedRange || ns < 0:
			return r.fileErr(line, t.names[4], fmt.Errorf("%s ms is out of range; want milliseconds ≥ 0", c.v))
		}
		row.Offset, row.HasOffset = time.Duration(ns), true
	}
	if c := cells[3]; c.set && len(c.v) > 0 {
		row.SessionID, row.Turn = s.turn(c.v)
	}
	if c := cells[0]; c.set && len(c.v) > 0 {
		r.textRow(row, string(c.v))
		return nil
	}
	if row.InputTokens == 0 && len(parts) == 0 {
		what := "no prompt"
		if t.prompt >= 0 {
			what = fmt.Sprintf("an empty %s", t.names[0])
		}
		if t.input >= 0 {
			what += " and no " + t.names[1]
		}
		return r.fileErr(line, t.names[0], fmt.Errorf("%s: the row has nothing to send; fill it in or drop it (--skip-invalid skips such rows)", what))
	}
	return nil
}

// textRow makes row a request with its own prompt text (Raw
// {"text_input": text}, sent as it is) and, unless a length column gave
// one, the text's length by Options.CountTokens.
func (r *Reader) textRow(row *Row, text string) {
	raw := append(r.rawBuf[:0], `{"text_input":`...)
	raw = jsonx.AppendString(raw, text)
	row.Raw = append(raw, '}')
	r.rawBuf = row.Raw[:0]
	if row.InputTokens == 0 {
		row.InputTokens = r.countTokens(text)
	}
}

// countTokens counts text with Options.CountTokens, or as words separated
// by white space without one.
func (r *Reader) countTokens(text string) int {
	if r.opts.CountTokens != nil {
		return r.opts.CountTokens(text)
	}
	n, in := 0, false
	for _, c := range text {
		sp := unicode.IsSpace(c)
		if !sp && !in {
			n++
		}
		in = !sp
	}
	return n
}

// promptsDecoder reads FormatPrompts: every non-blank line is one prompt.
type promptsDecoder struct{ r *Reader }

func (d *promptsDecoder) next(row *Row) error {
	line, err := d.r.nextRow(row)
	if err != nil {
		return err
	}
	text := string(line)
	if err := d.r.overInput(d.r.countTokens(text)); err != nil {
		return d.r.fileErr(row.Line, "prompt", err)
	}
	d.r.textRow(row, text)
	return nil
}

// tableDecoder reads FormatTable from JSON Lines (one object a line) or
// CSV (a header line, then rows); Parquet tables have their own decoder.
type tableDecoder struct {
	r        *Reader
	csv      bool
	cols     tableCols
	sessions *sessions
	fields   [][]byte
	started  bool
}

func newTableDecoder(r *Reader) (*tableDecoder, error) {
	d := &tableDecoder{r: r, sessions: newSessions()}
	first := bytes.TrimSpace(r.lr.cur)
	var names []string
	if len(first) > 0 && first[0] == '{' {
		err := objectFields(first, func(key, _ []byte) error {
			names = append(names, string(key))
			return nil
		})
		if err != nil {
			return nil, r.fileErr(r.lr.line, "", fmt.Errorf("the first line is not a JSON object: %v", err))
		}
	} else {
		d.csv = true
		fields, err := splitCSV(r.lr.cur, nil)
		if err != nil {
			return nil, r.fileErr(r.lr.line, "", fmt.Errorf("%w: %v", ErrHeader, err))
		}
		for _, f := range fields {
			names = append(names, strings.TrimSpace(string(f)))
		}
		r.lr.replay = false // the header is no row
	}
	cols, err := resolveColumns(r.opts.Columns, names)
	if err != nil {
		return nil, r.fileErr(r.lr.line, "", err)
	}
	d.cols = cols
	return d, nil
}

func (d *tableDecoder) next(row *Row) error {
	lr := &d.r.lr
	for {
		line, err := d.r.nextRow(row)
		if err != nil {
			return err
		}
		var cells [nTableCols]tableCell
		if d.csv {
			if d.fields, err = splitCSV(line, d.fields[:0]); err != nil {
				return d.r.fileErr(lr.line, "", err)
			}
			for k, i := range [nTableCols]int{d.cols.prompt, d.cols.input, d.cols.output, d.cols.session, d.cols.ts, d.cols.image, d.cols.audio} {
				if i >= 0 && i < len(d.fields) {
					cells[k] = tableCell{d.fields[i], true}
				}
			}
		} else {
			err := objectFields(line, func(key, val []byte) error {
				k := slices.Index(d.cols.names[:], string(key))
				if k < 0 {
					return nil
				}
				switch {
				case len(val) > 0 && val[0] == '"':
					s, ok := jsonString(val)
					if !ok {
						return fmt.Errorf("%s: not a valid JSON string", key)
					}
					cells[k] = tableCell{s, true}
				case string(val) == "null":
				case k == 0:
					return fmt.Errorf("%s: want a string, got %.40s", key, val)
				default:
					cells[k] = tableCell{val, true}
				}
				return nil
			})
			if err != nil {
				return d.r.fileErr(lr.line, "", err)
			}
		}
		return d.r.fillTableRow(row, &d.cols, &cells, d.sessions)
	}
}

// shareGPTMessage is one message of a ShareGPT conversation.
type shareGPTMessage struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

// shareGPTConversation is one element of a ShareGPT file.
type shareGPTConversation struct {
	ID            json.RawMessage   `json:"id"`
	Conversations []shareGPTMessage `json:"conversations"`
	// Image and Images are a LLaVA-style conversation's media (a path, a
	// URL, a data URL, or a list), sent with its first turn.
	Image  json.RawMessage `json:"image"`
	Images json.RawMessage `json:"images"`
	Audio  json.RawMessage `json:"audio"`
	Video  json.RawMessage `json:"video"`
}

// shareGPTDecoder reads FormatShareGPT: a JSON array of conversations (as
// ShareGPT_V3_unfiltered_cleaned_split.json ships, pretty-printed or on
// one line), or JSON Lines with one conversation a line. A conversation is
// one request (its first human→gpt pair) or, with Options.Sessions, a
// session with one turn per pair.
type shareGPTDecoder struct {
	r       *Reader
	doc     *jsonDoc // nil for JSON Lines
	started bool
	pending []Row
	n       int64 // conversations read, for ids
}

// shareGPTShape is the message for a conversation of the wrong shape.
const shareGPTShape = `want {"id": …, "conversations": [{"from": …, "value": …}, …]}`

func (d *shareGPTDecoder) next(row *Row) error {
	for len(d.pending) == 0 {
		var (
			conv shareGPTConversation
			line int64
		)
		if d.doc != nil {
			if !d.started {
				if err := d.doc.enter('[', "the array of conversations"); err != nil {
					return err
				}
				d.started = true
			}
			more, err := d.doc.more(']', "the array of conversations")
			if err != nil {
				return err
			}
			if !more {
				return io.EOF
			}
			// A conversation over the cap, or of the wrong shape, is a
			// row error: the framing holds, reading goes on after it.
			b, ln, err := d.doc.value("a conversation", true)
			if err != nil {
				return err
			}
			line = ln
			if err := json.Unmarshal(b, &conv); err != nil {
				return d.r.fileErr(line, "conversations", fmt.Errorf("%s: %v", shareGPTShape, err))
			}
		} else {
			lr := &d.r.lr
			b, err := lr.next()
			if err != nil {
				if errors.Is(err, errLineTooLong) {
					return d.r.fileErr(lr.line, "", err)
				}
				return err
			}
			if isBlank(b) {
				continue
			}
			line = lr.line
			if err := json.Unmarshal(b, &conv); err != nil {
				return d.r.fileErr(line, "conversations", fmt.Errorf("%s: %v", shareGPTShape, err))
			}
		}
		d.n++
		if err := d.split(&conv, line); err != nil {
			return err
		}
	}
	*row = d.pending[0]
	d.pending = d.pending[1:]
	return nil
}

// split turns one conversation into d.pending: AIPerf's pairing (every
// adjacent human→gpt pair when the roles are named so, else the first two
// messages), the first pair only unless Options.Sessions.
func (d *shareGPTDecoder) split(c *shareGPTConversation, line int64) error {
	msgs := c.Conversations
	if len(msgs) == 0 {
		return d.r.fileErr(line, "conversations", errors.New("missing or empty; a conversation needs a human message (and the gpt reply) to send"))
	}
	type pair struct{ prompt, reply string }
	var pairs []pair
	named := slices.ContainsFunc(msgs, func(m shareGPTMessage) bool { return m.From == "human" || m.From == "gpt" })
	switch {
	case named:
		for i := 0; i < len(msgs); i++ {
			if msgs[i].From != "human" {
				continue
			}
			p := pair{prompt: msgs[i].Value}
			if i+1 < len(msgs) && msgs[i+1].From == "gpt" {
				p.reply = msgs[i+1].Value
				i++
			}
			pairs = append(pairs, p)
		}
	case len(msgs) >= 2:
		pairs = append(pairs, pair{msgs[0].Value, msgs[1].Value})
	default:
		pairs = append(pairs, pair{prompt: msgs[0].Value})
	}
	if len(pairs) == 0 {
		return d.r.fileErr(line, "conversations", errors.New("no human message; nothing to send (--skip-invalid skips such conversations)"))
	}
	if !d.r.opts.Sessions {
		pairs = pairs[:1]
	}
	id := ""
	if len(pairs) > 1 {
		id = conversationID(c.ID, d.n)
	}
	for k, p := range pairs {
		if strings.TrimSpace(p.prompt) == "" {
			return d.r.fileErr(line, "conversations", fmt.Errorf("turn %d: the human message is empty; nothing to send (--skip-invalid skips such conversations)", k))
		}
		row := Row{Line: line, ParentID: -1, RequestID: -1}
		// An empty reply gives no output length: --osl then does.
		if p.reply != "" && d.r.opts.DefaultOutputTokens == 0 {
			row.OutputTokens = max(d.r.countTokens(p.reply), 1)
		}
		if id != "" {
			row.SessionID, row.Turn = id, k
		}
		d.r.rawBuf = nil // rows wait in pending: each owns its Raw
		d.r.textRow(&row, p.prompt)
		if k == 0 {
			if err := d.media(c, &row); err != nil {
				return err
			}
		}
		if err := d.r.overInput(row.InputTokens); err != nil {
			return d.r.fileErr(line, "conversations", err)
		}
		d.pending = append(d.pending, row)
	}
	return nil
}

// media resolves a conversation's image, audio and video fields into
// row's Raw (its first turn).
func (d *shareGPTDecoder) media(c *shareGPTConversation, row *Row) error {
	var parts []byte
	for _, f := range [...]struct {
		name string
		kind media.Kind
		val  json.RawMessage
	}{{"image", media.Image, c.Image}, {"images", media.Image, c.Images}, {"audio", media.Audio, c.Audio}, {"video", media.Video, c.Video}} {
		var err error
		if parts, err = d.r.appendMedia(parts, f.kind, f.val, row.Line, f.name, &row.Media); err != nil {
			return err
		}
	}
	if len(parts) > 0 {
		row.Images = row.Media.Images
		row.Raw = appendRawMedia(row.Raw, parts)
	}
	return nil
}

// conversationID is a ShareGPT conversation's session id: its id when it
// is a string or number, else its 1-based position.
func conversationID(raw json.RawMessage, n int64) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	var num json.Number
	if json.Unmarshal(raw, &num) == nil {
		return num.String()
	}
	return "conversation-" + strconv.FormatInt(n, 10)
}

// inputsEntry is one element of an inputs.json "data" array: AIPerf's
// {session_id, payloads: [body, …]} or GenAI-Perf's {payload: [body],
// <metadata>: [value]} (timestamp in ms among the metadata).
type inputsEntry struct {
	SessionID json.RawMessage   `json:"session_id"`
	Payloads  []json.RawMessage `json:"payloads"`
	Payload   []json.RawMessage `json:"payload"`
	Timestamp []json.Number     `json:"timestamp"`
}

// inputsDecoder reads FormatInputsJSON: an AIPerf or GenAI-Perf
// inputs.json, one request per payload, each sent as it is (Raw
// {"payload": body}); the payloads of one AIPerf session are its turns.
type inputsDecoder struct {
	r       *Reader
	doc     *jsonDoc
	state   int // 0 before the object, 1 in the object, 2 in "data"
	pending []Row
	n       int64
}

func (d *inputsDecoder) next(row *Row) error {
	d.r.payload = true
	doc := d.doc
	for len(d.pending) == 0 {
		switch d.state {
		case 0:
			if err := doc.enter('{', "the inputs.json object"); err != nil {
				return err
			}
			d.state = 1
		case 1:
			more, err := doc.more('}', "the inputs.json object")
			if err != nil {
				return err
			}
			if !more {
				return io.EOF
			}
			key, err := doc.key("the inputs.json object")
			if err != nil {
				return err
			}
			if key == "data" {
				if err := doc.enter('[', `the "data" array`); err != nil {
					return err
				}
				d.state = 2
				continue
			}
			// Another member is read through, never kept.
			if _, _, err := doc.value(fmt.Sprintf("the value of %q", key), false); err != nil {
				if errors.Is(err, errValueTooLarge) {
					continue // nothing of it is needed
				}
				return err
			}
		case 2:
			more, err := doc.more(']', `the "data" array`)
			if err != nil {
				return err
			}
			if !more {
				d.state = 1
				continue
			}
			raw, line, err := doc.value("an entry of data", true)
			d.n++
			if err != nil {
				return err
			}
			if err := d.split(raw, line); err != nil {
				return err
			}
		}
	}
	*row = d.pending[0]
	d.pending = d.pending[1:]
	return nil
}

// split turns one entry of data into d.pending.
func (d *inputsDecoder) split(raw json.RawMessage, line int64) error {
	var e inputsEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return d.r.fileErr(line, "data", fmt.Errorf("want {\"session_id\": …, \"payloads\": [{…}, …]} (AIPerf) or {\"payload\": [{…}]} (GenAI-Perf): %v", err))
	}
	bodies := e.Payloads
	if bodies == nil {
		bodies = e.Payload
	}
	if len(bodies) == 0 {
		return d.r.fileErr(line, "payloads", errors.New("missing or empty; an entry needs at least one request body"))
	}
	id := ""
	if len(e.SessionID) > 0 && len(bodies) > 1 {
		id = conversationID(e.SessionID, d.n)
	}
	for k, body := range bodies {
		var b struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Prompt              json.RawMessage `json:"prompt"`
			MaxTokens           *int            `json:"max_tokens"`
			MaxCompletionTokens *int            `json:"max_completion_tokens"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return d.r.fileErr(line, "payloads", fmt.Errorf("payload %d: want a JSON object (a request body): %v", k, err))
		}
		row := Row{Line: line, ParentID: -1, RequestID: -1}
		for _, m := range b.Messages {
			row.InputTokens += d.r.countTokens(contentText(m.Content))
		}
		if len(b.Prompt) > 0 {
			row.InputTokens += d.r.countTokens(contentText(b.Prompt))
		}
		switch {
		case b.MaxCompletionTokens != nil && *b.MaxCompletionTokens > 0:
			row.OutputTokens = *b.MaxCompletionTokens
		case b.MaxTokens != nil && *b.MaxTokens > 0:
			row.OutputTokens = *b.MaxTokens
		}
		if k == 0 && len(e.Timestamp) > 0 {
			ns, st := parseFixed([]byte(e.Timestamp[0].String()), 6)
			if st == fixedSyntax || st == fixedRange || ns < 0 {
				return d.r.fileErr(line, "timestamp", fmt.Errorf("%s: want milliseconds ≥ 0", e.Timestamp[0]))
			}
			row.Offset, row.HasOffset = time.Duration(ns), true
		}
		if id != "" {
			row.SessionID, row.Turn = id, k
		}
		row.Raw = append(append([]byte(`{"payload":`), body...), '}')
		d.pending = append(d.pending, row)
	}
	return nil
}

// contentText is the text of a message content or prompt: a string, or
// the "text" of an array of parts.
func contentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(c, &parts) != nil {
		return ""
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
		sb.WriteByte(' ')
	}
	return sb.String()
}
