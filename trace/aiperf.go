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

// turn fills row from one single_turn-shaped object. session is the
// multi_turn session id, or nil for single_turn.
func (d *aiperfDecoder) turn(row *Row, obj []byte, session []byte) error {
	var (
		ts, delay, out, sess []byte
		text, texts          []byte
		has                  = map[string]bool{}
		raw                  = append(d.r.rawBuf[:0], '{')
		parts                = d.r.mediaBuf[:0]
		mediaErr             error
	)
	err := objectFields(obj, func(key, val []byte) error {
		k := string(key)
		has[k] = true
		switch k {
		case "timestamp":
			ts = val
		case "delay":
			delay = val
		case "output_length":
			out = val
		case "session_id":
			sess = val
		case "text":
			text = val
		case "texts":
			texts = val
		}
		if mk, ok := aiperfMediaKind(k); ok && mediaErr == nil {
			parts, mediaErr = d.r.appendMedia(parts, mk, val, d.r.lr.line, k, &row.Media)
		}
		for _, c := range aiperfContentKeys {
			if k == c {
				if len(raw) > 1 {
					raw = append(raw, ',')
				}
				raw = strconv.AppendQuote(raw, k)
				raw = append(raw, ':')
				raw = append(raw, val...)
			}
		}
		return nil
	})
	d.r.mediaBuf = parts[:0]
	if err != nil {
		return d.rowErr("", "%w", err)
	}
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
	if mediaErr != nil {
		return mediaErr
	}
	if len(parts) > 0 {
		if len(raw) > 1 {
			raw = append(raw, ',')
		}
		raw = append(raw, `"media":[`...)
		raw = append(raw, parts...)
		raw = append(raw, ']')
		row.Images = row.Media.Images
	}
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
	// The prompt text is sent as it is: text_input is what the request
	// builders send (text stays for readers of Raw).
	if t, ok := aiperfText(text, texts); ok {
		raw = append(raw, `,"text_input":`...)
		raw = jsonx.AppendString(raw, t)
		row.InputTokens = d.r.countTokens(t)
		if err := d.r.overInput(row.InputTokens); err != nil {
			return d.rowErr("text", "%w", err)
		}
	}
	row.Raw = append(raw, '}')
	d.r.rawBuf = row.Raw[:0]
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
