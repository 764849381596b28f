package trace

import (
	"encoding/json"
	"strings"

	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/trace/media"

	"fmt"
	"strconv"
	"time"
)

// aiperfContentKeys are the keys of an AIPerf single_turn object (or one
// turn of a multi_turn session) carried verbatim in Row.Raw. Its image,
// audio and video fields are resolved into Raw's "media" parts instead.
var aiperfContentKeys = []string{"text", "texts", "role", "extra"}

// aiperfMediaKind is the media kind of an AIPerf modality key, or false.
func aiperfMediaKind(k string) (media.Kind, bool) {
	switch k {
	case "image", "images":
		return media.Image, true
	case "audio", "audios":
		return media.Audio, true
	case "video", "videos":
		return media.Video, true
	}
	return 0, false
}

// aiperfDecoder decodes AIPerf single_turn and multi_turn JSONL. Rows of a
// multi_turn line are emitted one per Next call from the buffered line.
type aiperfDecoder struct {
	r        *Reader
	multi    bool
	sessions *sessions
	turns    [][]byte // pending turns of the current multi_turn line
	session  []byte   // its session_id
	line     []byte   // copy of the line the turns alias
}

func (d *aiperfDecoder) rowErr(field, format string, args ...any) error {
	return d.r.fileErr(d.r.lr.line, field, fmt.Errorf(format, args...))
}

func (d *aiperfDecoder) next(row *Row) error {
	lr := &d.r.lr
	for len(d.turns) == 0 {
		line, err := d.r.nextLine()
		if err != nil {
			return err
		}
		if !d.multi {
			resetRow(row, lr.line)
			return d.turn(row, line, nil)
		}
		if err := d.splitTurns(line); err != nil {
			return err
		}
	}
	t := d.turns[0]
	d.turns = d.turns[1:]
	resetRow(row, lr.line)
	return d.turn(row, t, d.session)
}

// splitTurns parses a multi_turn line into d.turns and d.session.
func (d *aiperfDecoder) splitTurns(line []byte) error {
	d.line = append(d.line[:0], line...)
	d.turns = d.turns[:0]
	d.session = nil
	var turns []byte
	err := objectFields(d.line, func(key, val []byte) error {
		switch string(key) {
		case "session_id":
			s, ok := jsonString(val)
			if !ok {
				return d.rowErr("session_id", "want a string")
			}
			d.session = s
		case "turns":
			turns = val
		}
		return nil
	})
	if err != nil {
		return d.rowErr("", "%w", err)
	}
	if turns == nil {
		return d.rowErr("turns", "missing; a multi_turn line is {\"session_id\": …, \"turns\": [ {…}, … ]}")
	}
	if err := arrayElems(turns, func(e []byte) error {
		d.turns = append(d.turns, e)
		return nil
	}); err != nil {
		return d.rowErr("turns", "%w", err)
	}
	if len(d.turns) == 0 {
		return d.rowErr("turns", "empty; a session needs at least one turn")
	}
	if len(d.session) == 0 {
		// AIPerf generates an id; a line-based one keeps runs reproducible.
		d.session = []byte("line-" + strconv.FormatInt(d.r.lr.line, 10))
	}
	return nil
}

// aiperfFields are the members of one single_turn-shaped object that
// turn reads, as recorded by turnField.
type aiperfFields struct {
	ts, delay, out, sess []byte
	text, texts          []byte
	raw                  []byte // '{' and the content members, so far
	parts                []byte // the media parts, comma-separated
	mediaErr             error  // the first media part's error
}

// turn fills row from one single_turn-shaped object. session is the
// multi_turn session id, or nil for single_turn.
func (d *aiperfDecoder) turn(row *Row, obj []byte, session []byte) error {
	// has, every key present, is filled here, not in turnField, so that
	// it and its keys stay on the stack.
	has := map[string]bool{}
	f := aiperfFields{
		raw:   append(d.r.rawBuf[:0], '{'),
		parts: d.r.mediaBuf[:0],
	}
	err := objectFields(obj, func(key, val []byte) error {
		k := string(key)
		has[k] = true
		d.turnField(&f, row, k, val)
		return nil
	})
	d.r.mediaBuf = f.parts[:0]
	if err != nil {
		return d.rowErr("", "%w", err)
	}
	if err := d.checkModal(has); err != nil {
		return err
	}
	if f.mediaErr != nil {
		return f.mediaErr
	}
	raw := f.raw
	if len(f.parts) > 0 {
		if len(raw) > 1 {
			raw = append(raw, ',')
		}
		raw = append(raw, `"media":[`...)
		raw = append(raw, f.parts...)
		raw = append(raw, ']')
		row.Images = row.Media.Images
	}
	if err := d.turnTiming(row, f.ts, f.delay, f.out); err != nil {
		return err
	}
	// The prompt text is sent as it is: text_input is what the request
	// builders send (text stays for readers of Raw).
	if t, ok := aiperfText(f.text, f.texts); ok {
		raw = append(raw, `,"text_input":`...)
		raw = jsonx.AppendString(raw, t)
		row.InputTokens = d.r.countTokens(t)
		if err := d.r.overInput(row.InputTokens); err != nil {
			return d.rowErr("text", "%w", err)
		}
	}
	row.Raw = append(raw, '}')
	d.r.rawBuf = row.Raw[:0]
	return d.turnSession(row, session, f.sess)
}

// turnField records the member k: val of a turn in f: a value turn
// reads, a content member copied into f.raw, or a media part decoded into
// row.Media (an error is kept in f.mediaErr, to be reported after the
// checks of the row's shape).
func (d *aiperfDecoder) turnField(f *aiperfFields, row *Row, k string, val []byte) {
	switch k {
	case "timestamp":
		f.ts = val
	case "delay":
		f.delay = val
	case "output_length":
		f.out = val
	case "session_id":
		f.sess = val
	case "text":
		f.text = val
	case "texts":
		f.texts = val
	}
	if mk, ok := aiperfMediaKind(k); ok && f.mediaErr == nil {
		f.parts, f.mediaErr = d.r.appendMedia(f.parts, mk, val, d.r.lr.line, k, &row.Media)
	}
	for _, c := range aiperfContentKeys {
		if k == c {
			if len(f.raw) > 1 {
				f.raw = append(f.raw, ',')
			}
			f.raw = strconv.AppendQuote(f.raw, k)
			f.raw = append(f.raw, ':')
			f.raw = append(f.raw, val...)
		}
	}
}

// checkModal checks the modalities of a turn whose keys are has: at most
// one of each singular/plural pair, and at least one of them.
func (d *aiperfDecoder) checkModal(has map[string]bool) error {
	modal := false
	for _, m := range [...][2]string{{"text", "texts"}, {"image", "images"}, {"audio", "audios"}, {"video", "videos"}} {
		if has[m[0]] && has[m[1]] {
			return d.rowErr(m[1], "%s and %s are exclusive; keep one", m[0], m[1])
		}
		modal = modal || has[m[0]] || has[m[1]]
	}
	if !modal && (has["messages"] || has["spawns"] || has["forks"]) {
		return d.rowErr("messages", "an AIPerf multi_turn turn has text, not messages, forks or spawns: this looks like AIPerf dag_jsonl; name the format aiperf-dag")
	}
	if !modal {
		return d.rowErr("text", "missing; an AIPerf row needs one of text, texts, image(s), audio(s), video(s)")
	}
	return nil
}

// turnTiming sets row's offset, delay and output tokens from the values
// of timestamp, delay and output_length (nil when absent).
func (d *aiperfDecoder) turnTiming(row *Row, ts, delay, out []byte) error {
	if ts != nil && delay != nil {
		return d.rowErr("delay", "timestamp and delay are exclusive: keep timestamp for an absolute arrival or delay for think time after the previous turn")
	}
	if ts != nil {
		t, err := d.millis("timestamp", ts)
		if err != nil {
			return err
		}
		row.Offset, row.HasOffset = t, true
	}
	if delay != nil {
		t, err := d.millis("delay", delay)
		if err != nil {
			return err
		}
		row.Delay, row.HasDelay = t, true
	}
	if out != nil {
		n, msg := parseCount(out)
		if msg != "" {
			return d.rowErr("output_length", "%s: %s; want a whole number of tokens", out, msg)
		}
		if n < 1 {
			return d.rowErr("output_length", "%d tokens; must be ≥ 1 (fix the row, or pass --skip-invalid to drop such rows)", n)
		}
		row.OutputTokens = n
	}
	return nil
}

// turnSession sets row's session and turn: session is the multi_turn
// session id, or nil for single_turn, where sess is the value of the
// row's session_id (nil when absent).
func (d *aiperfDecoder) turnSession(row *Row, session, sess []byte) error {
	if session == nil && sess != nil {
		s, ok := jsonString(sess)
		if !ok {
			return d.rowErr("session_id", "want a string")
		}
		if len(s) == 0 {
			return nil // "" = no session, as when the key is absent
		}
		session = s
		// single_turn sessions are sent in order without history.
		row.Cumulative = true
	}
	if session != nil {
		row.SessionID, row.Turn = d.sessions.turn(session)
	}
	return nil
}

// aiperfText returns the prompt text of an AIPerf row: text (a string),
// or the contents of texts (strings or {"name", "contents": […]}) joined
// by spaces; ok is false when neither holds any text.
func aiperfText(text, texts []byte) (string, bool) {
	if text != nil {
		var s string
		if json.Unmarshal(text, &s) == nil && s != "" {
			return s, true
		}
		return "", false
	}
	if texts == nil {
		return "", false
	}
	var items []json.RawMessage
	if json.Unmarshal(texts, &items) != nil {
		return "", false
	}
	var parts []string
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			parts = append(parts, s)
			continue
		}
		var named struct {
			Contents []string `json:"contents"`
		}
		if json.Unmarshal(it, &named) == nil {
			parts = append(parts, named.Contents...)
		}
	}
	t := strings.Join(parts, " ")
	return t, strings.TrimSpace(t) != ""
}

func (d *aiperfDecoder) millis(field string, v []byte) (time.Duration, error) {
	ns, st := parseFixed(v, 6)
	switch {
	case st == fixedSyntax:
		return 0, d.rowErr(field, "%.40s is not a number; want milliseconds", v)
	case st == fixedRange:
		return 0, d.rowErr(field, "%s ms is out of range", v)
	case ns < 0:
		return 0, d.rowErr(field, "%s is negative; want milliseconds ≥ 0", v)
	}
	return time.Duration(ns), nil
}
