package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// The AIPerf DAG formats (dag_jsonl and the Graph IR) describe one task
// across several lines: a session spawns sessions defined further down,
// a graph record is instantiated by later trace records. Their decoders
// read the whole file on the first Next, resolve the graph and then hand
// out its rows in dependency order (every row after the rows it waits
// for, design 0008). A problem with the graph is final: no row of a
// half-resolved graph is returned, so SkipInvalid does not apply.

// dagFile is the state shared by the two whole-file decoders.
type dagFile struct {
	r       *Reader
	pending []Row
	loaded  bool
}

// lines calls fn for every non-blank line of the file, with a copy of it.
func (f *dagFile) lines(fn func(line []byte) error) error {
	lr := &f.r.lr
	for {
		line, err := lr.next()
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return f.fatal(lr.line, "", err)
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if isBlank(line) {
			continue
		}
		if err := fn(append([]byte(nil), line...)); err != nil {
			return err
		}
	}
}

// fatal makes err, about line and field, the error that ends reading.
func (f *dagFile) fatal(line int64, field string, err error) error {
	pe := f.r.fileErr(line, field, err)
	f.r.lr.ioErr = pe
	return pe
}

func (f *dagFile) next(row *Row, load func() error) error {
	if !f.loaded {
		f.loaded = true
		if err := load(); err != nil {
			return err
		}
	}
	if len(f.pending) == 0 {
		return io.EOF
	}
	*row = f.pending[0]
	f.pending = f.pending[1:]
	return nil
}

// unmarshalLine decodes one JSON line into v with an error naming the
// field that has the wrong type.
func (f *dagFile) unmarshalLine(line int64, data []byte, v any, what string) error {
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return f.fatal(line, "", &jsonSyntax{int(se.Offset), "invalid JSON: one " + what + " object per line (a pretty-printed file: jq -c . FILE)"})
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return f.fatal(line, te.Field, fmt.Errorf("want %s, not a JSON %s", te.Type, te.Value))
		}
		return f.fatal(line, "", err)
	}
	return nil
}

// micros parses a non-negative JSON number of unit (scale: digits of
// nanoseconds per unit, 6 for ms, 3 for µs).
func (f *dagFile) duration(line int64, field string, v json.RawMessage, scale int, unit string) (time.Duration, error) {
	ns, st := parseFixed(v, scale)
	switch {
	case st == fixedSyntax:
		return 0, f.fatal(line, field, fmt.Errorf("%.40s is not a number; want %s ≥ 0", v, unit))
	case st == fixedRange:
		return 0, f.fatal(line, field, fmt.Errorf("%.40s %s is out of range", v, unit))
	case ns < 0:
		return 0, f.fatal(line, field, fmt.Errorf("%s is negative; want %s ≥ 0", v, unit))
	}
	return time.Duration(ns), nil
}

// singleUserText returns the text of a messages array that holds exactly
// one user message with string content.
func singleUserText(msgs json.RawMessage) (string, bool) {
	var m []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msgs, &m) != nil || len(m) != 1 || m[0].Role != "user" {
		return "", false
	}
	var s string
	if json.Unmarshal(m[0].Content, &s) != nil {
		return "", false
	}
	return s, true
}

// messagesText returns the text of every string content (or text part) of
// a messages array, for counting tokens.
func messagesText(msgs json.RawMessage) string {
	var m []struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(msgs, &m) != nil {
		return ""
	}
	var b strings.Builder
	for _, x := range m {
		var s string
		if json.Unmarshal(x.Content, &s) == nil {
			b.WriteString(s)
			b.WriteByte(' ')
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(x.Content, &parts) == nil {
			for _, p := range parts {
				b.WriteString(p.Text)
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}

// rawObject builds a Row.Raw object from key/value pairs, leaving out
// absent values.
func rawObject(kv ...any) json.RawMessage {
	b := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		var v []byte
		switch x := kv[i+1].(type) {
		case json.RawMessage:
			if len(x) == 0 || string(x) == "null" {
				continue
			}
			v = x
		case string:
			v = jsonx.AppendString(nil, x)
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, kv[i].(string))
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}')
}

// ---------------------------------------------------------------------
// dag_jsonl

type dagSession struct {
	SessionID        string          `json:"session_id"`
	Turns            []dagTurn       `json:"turns"`
	PreSessionSpawns json.RawMessage `json:"pre_session_spawns"`
	Orchestrator     bool            `json:"orchestrator"`
	ContextMode      string          `json:"context_mode"`

	line     int64
	parent   *dagLink   // who starts this session; nil for a root
	joins    [][]string // by turn: the children whose last turn it waits for
	ids      []int64    // by turn: RequestID once emitted, -1 before
	forked   []bool     // by turn: a fork child continues its conversation
	visiting []bool
}

type dagTurn struct {
	Messages  json.RawMessage `json:"messages"`
	Model     string          `json:"model"`
	MaxTokens json.RawMessage `json:"max_tokens"`
	Tools     json.RawMessage `json:"tools"`
	Extra     json.RawMessage `json:"extra"`
	Forks     json.RawMessage `json:"forks"`
	Spawns    json.RawMessage `json:"spawns"`
	Delay     json.RawMessage `json:"delay"`
}

// dagLink says how a child session is started: by turn Turn of session
// From (−1: before its first turn), inheriting its conversation (Fork).
type dagLink struct {
	from  *dagSession
	turn  int
	fork  bool
	field string
}

type aiperfDAGDecoder struct {
	dagFile
	sessions map[string]*dagSession
	order    []*dagSession
	nextID   int64
}

func newAIPerfDAGDecoder(r *Reader) *aiperfDAGDecoder {
	return &aiperfDAGDecoder{dagFile: dagFile{r: r}, sessions: map[string]*dagSession{}}
}

func (d *aiperfDAGDecoder) next(row *Row) error { return d.dagFile.next(row, d.load) }

func (d *aiperfDAGDecoder) load() error {
	err := d.lines(func(line []byte) error {
		ln := d.r.lr.line
		s := &dagSession{line: ln}
		if err := d.unmarshalLine(ln, line, s, "session"); err != nil {
			return err
		}
		if s.SessionID == "" {
			s.SessionID = "line-" + strconv.FormatInt(ln, 10)
		}
		if o, dup := d.sessions[s.SessionID]; dup {
			return d.fatal(ln, "session_id", fmt.Errorf("%q is already the session of line %d; session ids are unique", s.SessionID, o.line))
		}
		if s.Orchestrator {
			return d.fatal(ln, "orchestrator", errors.New("a request-less orchestrator (rounds, think_time_ms) cannot be expressed as dependent rows; write its rounds out as sessions that spawn and join the workers"))
		}
		switch s.ContextMode {
		case "", "deltas_without_responses", "message_array_with_responses":
		default:
			return d.fatal(ln, "context_mode", fmt.Errorf("%q: want deltas_without_responses or message_array_with_responses", s.ContextMode))
		}
		if len(s.Turns) == 0 {
			return d.fatal(ln, "turns", errors.New("missing or empty; a session needs at least one turn"))
		}
		s.joins = make([][]string, len(s.Turns))
		s.ids = make([]int64, len(s.Turns))
		for i := range s.ids {
			s.ids[i] = -1
		}
		s.visiting = make([]bool, len(s.Turns))
		s.forked = make([]bool, len(s.Turns))
		d.sessions[s.SessionID] = s
		d.order = append(d.order, s)
		return nil
	})
	if err != nil {
		return err
	}
	if len(d.order) == 0 {
		return nil
	}
	for _, s := range d.order {
		if err := d.links(s); err != nil {
			return err
		}
	}
	for _, s := range d.order {
		for k := range s.Turns {
			if _, err := d.emit(s, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// links reads the forks and spawns of s and marks its children.
func (d *aiperfDAGDecoder) links(s *dagSession) error {
	link := func(child string, turn int, fork bool, field string) (*dagSession, error) {
		c, ok := d.sessions[child]
		if !ok {
			return nil, d.fatal(s.line, field, fmt.Errorf("%q is no session_id of this file; define the child session on its own line", child))
		}
		if c == s {
			return nil, d.fatal(s.line, field, fmt.Errorf("%q is this session itself", child))
		}
		if c.parent != nil {
			return nil, d.fatal(s.line, field, fmt.Errorf("%q is already started by session %q (line %d); a session has one parent", child, c.parent.from.SessionID, c.parent.from.line))
		}
		c.parent = &dagLink{from: s, turn: turn, fork: fork, field: field}
		return c, nil
	}
	// spawns reads a spawns list issued before turn (−1: pre-session).
	spawns := func(raw json.RawMessage, turn int, field string) error {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return d.fatal(s.line, field, errors.New("want an array of session ids or {\"children\": [...], \"join_at\": N} objects"))
		}
		for i, e := range elems {
			f := fmt.Sprintf("%s[%d]", field, i)
			var children []string
			join := turn + 1
			background := false
			var name string
			if json.Unmarshal(e, &name) == nil {
				children = []string{name}
			} else {
				var o struct {
					Children   []string        `json:"children"`
					JoinAt     json.RawMessage `json:"join_at"`
					Background bool            `json:"background"`
				}
				if json.Unmarshal(e, &o) != nil || len(o.Children) == 0 {
					return d.fatal(s.line, f, errors.New("want a session id or {\"children\": [ids], \"join_at\": N}"))
				}
				children, background = o.Children, o.Background
				if o.JoinAt != nil {
					n, msg := parseCount(o.JoinAt)
					if msg != "" {
						return d.fatal(s.line, f+".join_at", fmt.Errorf("%s: want a turn index", o.JoinAt))
					}
					join = n
				}
			}
			if !background {
				if join <= turn || join >= len(s.Turns) {
					return d.fatal(s.line, f+".join_at", fmt.Errorf("turn %d: want a later turn of this session (%d..%d); set background: true for children nobody waits for", join, turn+1, len(s.Turns)-1))
				}
			}
			for _, ch := range children {
				c, err := link(ch, turn, false, f)
				if err != nil {
					return err
				}
				if !background {
					s.joins[join] = append(s.joins[join], c.SessionID)
				}
			}
		}
		return nil
	}
	if err := spawns(s.PreSessionSpawns, -1, "pre_session_spawns"); err != nil {
		return err
	}
	for k := range s.Turns {
		t := &s.Turns[k]
		if err := spawns(t.Spawns, k, fmt.Sprintf("turns[%d].spawns", k)); err != nil {
			return err
		}
		if len(t.Forks) == 0 || string(t.Forks) == "null" {
			continue
		}
		field := fmt.Sprintf("turns[%d].forks", k)
		var elems []json.RawMessage
		if json.Unmarshal(t.Forks, &elems) != nil {
			return d.fatal(s.line, field, errors.New("want an array of session ids or {\"child\": id, \"background\": true} objects"))
		}
		terminal := false
		for i, e := range elems {
			f := fmt.Sprintf("%s[%d]", field, i)
			var name string
			if json.Unmarshal(e, &name) == nil {
				terminal = true
			} else {
				var o struct {
					Child      string `json:"child"`
					Background bool   `json:"background"`
				}
				if json.Unmarshal(e, &o) != nil || o.Child == "" {
					return d.fatal(s.line, f, errors.New("want a session id or {\"child\": id, \"background\": true}"))
				}
				name = o.Child
				terminal = terminal || !o.Background
			}
			c, err := link(name, k, true, f)
			if err != nil {
				return err
			}
			s.forked[k] = s.forked[k] || c.deltas()
		}
		if terminal && k+1 < len(s.Turns) {
			return d.fatal(s.line, field, fmt.Errorf("a fork without background: true ends the session, but %d turns follow; move them into the child, or mark the fork background", len(s.Turns)-k-1))
		}
	}
	return nil
}

// deltas reports whether s sends each turn's messages after the
// conversation so far (with the live replies).
func (s *dagSession) deltas() bool { return s.ContextMode != "message_array_with_responses" }

// extended reports whether turn k of s is continued by another row: its
// next turn, or a fork child, in delta mode.
func (d *aiperfDAGDecoder) extended(s *dagSession, k int) bool {
	return (k+1 < len(s.Turns) && s.deltas()) || s.forked[k]
}

// startGate returns what the first turn of s (and its pre-session
// children) wait for: the request that starts it, or nil for a root.
func (d *aiperfDAGDecoder) startGate(s *dagSession) (waitFor []int64, parent int64, err error) {
	p := s.parent
	if p == nil {
		return nil, -1, nil
	}
	if p.turn < 0 {
		w, _, err := d.startGate(p.from)
		return w, -1, err
	}
	id, err := d.emit(p.from, p.turn)
	if err != nil {
		return nil, -1, err
	}
	if p.fork && s.deltas() {
		return []int64{id}, id, nil
	}
	return []int64{id}, -1, nil
}

// emit returns the RequestID of turn k of s, emitting it (after
// everything it waits for) on first use.
func (d *aiperfDAGDecoder) emit(s *dagSession, k int) (int64, error) {
	if s.ids[k] >= 0 {
		return s.ids[k], nil
	}
	field := fmt.Sprintf("turns[%d]", k)
	if s.visiting[k] {
		return 0, d.fatal(s.line, field, errors.New("the sessions start each other in a cycle; a session may only be started by a session that does not depend on it"))
	}
	s.visiting[k] = true
	t := &s.Turns[k]
	r := Row{Line: s.line, SessionID: s.SessionID, Turn: k, ParentID: -1, Kind: t.Model}
	var err error
	if k > 0 {
		prev, err := d.emit(s, k-1)
		if err != nil {
			return 0, err
		}
		r.WaitFor = []int64{prev}
		if s.deltas() {
			r.ParentID = prev
		}
	} else {
		if r.WaitFor, r.ParentID, err = d.startGate(s); err != nil {
			return 0, err
		}
	}
	for _, c := range s.joins[k] {
		cs := d.sessions[c]
		id, err := d.emit(cs, len(cs.Turns)-1)
		if err != nil {
			return 0, err
		}
		if !slices.Contains(r.WaitFor, id) {
			r.WaitFor = append(r.WaitFor, id)
		}
	}
	if t.Delay != nil {
		if r.Delay, err = d.duration(s.line, field+".delay", t.Delay, 6, "milliseconds"); err != nil {
			return 0, err
		}
		r.HasDelay = true
	}
	if r.WaitFor == nil {
		r.Offset, r.HasOffset = r.Delay, true // a root starts with the trace
		r.Delay, r.HasDelay = 0, false
	}
	if t.MaxTokens != nil {
		n, msg := parseCount(t.MaxTokens)
		if msg != "" || n < 0 {
			return 0, d.fatal(s.line, field+".max_tokens", fmt.Errorf("%s: want a whole number of tokens ≥ 0", t.MaxTokens))
		}
		r.OutputTokens = max(n, 1)
	}
	if len(t.Messages) == 0 || t.Messages[0] != '[' {
		return 0, d.fatal(s.line, field+".messages", errors.New("missing; a turn needs its messages array"))
	}
	// A turn that continues a conversation, or is continued, is built by
	// the replay from the conversation and the live replies: it must add
	// one user message. Other turns are sent as written.
	if r.ParentID >= 0 || d.extended(s, k) {
		text, ok := singleUserText(t.Messages)
		if !ok {
			return 0, d.fatal(s.line, field+".messages", errors.New("a turn that continues a conversation with its live replies (deltas_without_responses, a fork) must add exactly one user message with text content; write the history out and set context_mode message_array_with_responses"))
		}
		if len(t.Tools) > 0 && string(t.Tools) != "null" {
			return 0, d.fatal(s.line, field+".tools", errors.New("tools are sent only with a complete messages array; set context_mode message_array_with_responses"))
		}
		r.Raw = rawObject("text_input", text, "extra", t.Extra)
		r.InputTokens = d.r.countTokens(text)
	} else {
		r.Raw = rawObject("messages", t.Messages, "tools", t.Tools, "extra", t.Extra)
		r.InputTokens = d.r.countTokens(messagesText(t.Messages))
		r.Cumulative = true
	}
	if err := d.r.overInput(r.InputTokens); err != nil {
		return 0, d.fatal(s.line, field+".messages", err)
	}
	r.RequestID = d.nextID
	r.Index = d.nextID
	d.nextID++
	s.ids[k] = r.RequestID
	s.visiting[k] = false
	d.pending = append(d.pending, r)
	return r.RequestID, nil
}
