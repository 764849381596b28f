package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// AIPerf Graph IR (native agentic lane): "graph" records define LLM nodes
// and the edges between them; "trace" records instantiate a graph. Each
// instance becomes one task of dependent rows (design 0008).

type graphRecord struct {
	Kind      string                     `json:"kind"`
	ID        string                     `json:"id"`
	Version   string                     `json:"version"`
	Nodes     map[string]*graphNode      `json:"nodes"`
	Edges     []graphEdge                `json:"edges"`
	GraphRef  string                     `json:"graph_ref"`
	State     map[string]json.RawMessage `json:"initial_state"`
	Messages  json.RawMessage            `json:"messages"`
	line      int64
	instances int
}

type graphNode struct {
	NodeType      string          `json:"node_type"`
	Prompt        []graphMessage  `json:"prompt"`
	Output        string          `json:"output"`
	MaxTokens     json.RawMessage `json:"max_tokens"`
	Model         string          `json:"model"`
	RawTools      json.RawMessage `json:"raw_tools"`
	ExtraHeaders  json.RawMessage `json:"extra_headers"`
	ExtraBody     json.RawMessage `json:"extra_body"`
	MinStartDelay json.RawMessage `json:"min_start_delay_us"`
	Inputs        []struct {
		Channel string          `json:"channel"`
		Count   json.RawMessage `json:"count"`
	} `json:"inputs"`
}

type graphMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type graphEdge struct {
	Source     string          `json:"source"`
	Target     string          `json:"target"`
	AfterDone  json.RawMessage `json:"delay_after_predecessor_us"`
	AfterStart json.RawMessage `json:"delay_after_predecessor_start_us"`
	AfterFirst json.RawMessage `json:"delay_after_predecessor_first_token_us"`
	MinStart   json.RawMessage `json:"min_start_delay_us"`
}

type graphIRDecoder struct {
	dagFile
	graphs []*graphRecord
	byID   map[string]*graphRecord
	nextID int64
}

func newGraphIRDecoder(r *Reader) *graphIRDecoder {
	return &graphIRDecoder{dagFile: dagFile{r: r}, byID: map[string]*graphRecord{}}
}

func (d *graphIRDecoder) next(row *Row) error { return d.dagFile.next(row, d.load) }

func (d *graphIRDecoder) load() error {
	var traces []*graphRecord
	err := d.lines(func(line []byte) error {
		ln := d.r.lr.line
		g := &graphRecord{line: ln}
		if err := d.unmarshalLine(ln, line, g, "record"); err != nil {
			return err
		}
		switch g.Kind {
		case "graph":
			if len(g.Nodes) == 0 {
				return d.fatal(ln, "nodes", errors.New("missing or empty; a graph needs its llm nodes"))
			}
			if o, dup := d.byID[g.ID]; dup {
				return d.fatal(ln, "id", fmt.Errorf("%q is already the graph of line %d", g.ID, o.line))
			}
			d.byID[g.ID] = g
			d.graphs = append(d.graphs, g)
		case "trace":
			if g.Messages != nil {
				return d.fatal(ln, "messages", errors.New("the messages shorthand is not supported; give the channels' text in initial_state"))
			}
			traces = append(traces, g)
		default:
			return d.fatal(ln, "kind", fmt.Errorf("%q: want graph or trace (the YAML form: convert it to JSON Lines)", g.Kind))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(traces) == 0 {
		for _, g := range d.graphs {
			if err := d.instance(g, &graphRecord{ID: "graph-" + g.ID, line: g.line}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range traces {
		g, ok := d.byID[t.GraphRef]
		if !ok {
			if t.GraphRef != "" || len(d.graphs) != 1 {
				return d.fatal(t.line, "graph_ref", fmt.Errorf("%q names no graph record of this file; name one by its id", t.GraphRef))
			}
			g = d.graphs[0]
		}
		if t.ID == "" {
			t.ID = fmt.Sprintf("line-%d", t.line)
		}
		if err := d.instance(g, t); err != nil {
			return err
		}
	}
	return nil
}

// graphGate is what a node waits for: rows completed plus a delay, and
// optionally a time since the trace started.
type graphGate struct {
	deps      map[string]time.Duration // predecessor node → delay after its completion
	offset    time.Duration
	hasOffset bool
}

// instance emits one task: g's nodes in dependency order, for trace t.
func (d *graphIRDecoder) instance(g *graphRecord, t *graphRecord) error {
	gi := &graphInstance{d: d, g: g, t: t, ln: g.line}
	if err := gi.nodes(); err != nil {
		return err
	}
	if err := gi.edges(); err != nil {
		return err
	}
	if err := gi.inputs(); err != nil {
		return err
	}
	rows, err := gi.order()
	if err != nil {
		return err
	}
	d.pending = append(d.pending, rows...)
	g.instances++
	return nil
}

// graphInstance is the state of one instance of a graph while its rows
// are made: the nodes by name, their gates and the edges anchored on a
// predecessor's start.
type graphInstance struct {
	d         *graphIRDecoder
	g, t      *graphRecord
	ln        int64
	names     []string            // the nodes, sorted
	producers map[string][]string // channel → the nodes writing it
	gates     map[string]*graphGate
	minStart  map[string]time.Duration
	// Start-anchored edges refer to the predecessor's own gate; they are
	// resolved after the completion edges, in dependency order.
	starts map[string][]graphStartEdge
}

// graphStartEdge is an edge into a node anchored on its predecessor's
// dispatch (delay_after_predecessor_start_us).
type graphStartEdge struct {
	src, field string
	delay      time.Duration
}

// nodes checks the graph's nodes and gives each an empty gate.
func (gi *graphInstance) nodes() error {
	gi.names = make([]string, 0, len(gi.g.Nodes))
	gi.producers = map[string][]string{}
	for n, node := range gi.g.Nodes {
		if node == nil {
			return gi.d.fatal(gi.ln, "nodes."+n, errors.New("want a node object"))
		}
		if node.NodeType != "llm" {
			return gi.d.fatal(gi.ln, "nodes."+n+".node_type", fmt.Errorf("%q: only llm nodes exist", node.NodeType))
		}
		if n == "START" || n == "END" {
			return gi.d.fatal(gi.ln, "nodes."+n, errors.New("START and END are reserved names"))
		}
		gi.names = append(gi.names, n)
		if node.Output != "" {
			gi.producers[node.Output] = append(gi.producers[node.Output], n)
		}
	}
	sort.Strings(gi.names)
	gi.gates = map[string]*graphGate{}
	for _, n := range gi.names {
		gi.gates[n] = &graphGate{deps: map[string]time.Duration{}}
	}
	gi.minStart = map[string]time.Duration{}
	gi.starts = map[string][]graphStartEdge{}
	return nil
}

// dur reads a delay in microseconds; a missing one is zero.
func (gi *graphInstance) dur(field string, v json.RawMessage) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	return gi.d.duration(gi.ln, field, v, 3, "microseconds")
}

// addDep makes g wait for src, keeping the longest delay after it.
func (g *graphGate) addDep(src string, delay time.Duration) {
	if old, ok := g.deps[src]; !ok || delay > old {
		g.deps[src] = delay
	}
}

// edges reads the graph's edges into the gates.
func (gi *graphInstance) edges() error {
	for i, e := range gi.g.Edges {
		if err := gi.edge(fmt.Sprintf("edges[%d]", i), e); err != nil {
			return err
		}
	}
	return nil
}

// edge reads one edge, f its field name: a START edge is an offset, a
// start-anchored one waits for order, the others are a dependency.
func (gi *graphInstance) edge(f string, e graphEdge) error {
	d, ln := gi.d, gi.ln
	if e.Target == "END" {
		return nil
	}
	tg, ok := gi.gates[e.Target]
	if !ok {
		return d.fatal(ln, f+".target", fmt.Errorf("%q is no node of this graph", e.Target))
	}
	if e.Source != "START" && gi.gates[e.Source] == nil {
		return d.fatal(ln, f+".source", fmt.Errorf("%q is no node of this graph", e.Source))
	}
	ms, err := gi.dur(f+".min_start_delay_us", e.MinStart)
	if err != nil {
		return err
	}
	done, err := gi.dur(f+".delay_after_predecessor_us", e.AfterDone)
	if err != nil {
		return err
	}
	start, err := gi.dur(f+".delay_after_predecessor_start_us", e.AfterStart)
	if err != nil {
		return err
	}
	if e.AfterFirst != nil && e.AfterStart == nil {
		return d.fatal(ln, f+".delay_after_predecessor_first_token_us", errors.New("a first-token anchor needs delay_after_predecessor_start_us as its fallback; reprise waits for the predecessor's dispatch, add that field"))
	}
	if e.AfterDone != nil && e.AfterStart != nil {
		return d.fatal(ln, f, errors.New("delay_after_predecessor_us and delay_after_predecessor_start_us are exclusive; keep one anchor"))
	}
	if e.Source == "START" {
		if e.AfterFirst != nil {
			return d.fatal(ln, f+".delay_after_predecessor_first_token_us", errors.New("START has no first token; use min_start_delay_us"))
		}
		off := ms + done + start
		if !tg.hasOffset || off > tg.offset {
			tg.offset, tg.hasOffset = off, true
		}
		return nil
	}
	if ms > gi.minStart[e.Target] {
		gi.minStart[e.Target] = ms
	}
	if e.AfterStart != nil {
		gi.starts[e.Target] = append(gi.starts[e.Target], graphStartEdge{e.Source, f, start})
		return nil
	}
	tg.addDep(e.Source, done)
	return nil
}

// inputs makes each node wait for every writer of the channels it reads,
// and reads its own min_start_delay_us.
func (gi *graphInstance) inputs() error {
	d, ln := gi.d, gi.ln
	for _, n := range gi.names {
		node := gi.g.Nodes[n]
		for i, in := range node.Inputs {
			f := fmt.Sprintf("nodes.%s.inputs[%d]", n, i)
			ps := gi.producers[in.Channel]
			if len(ps) == 0 {
				return d.fatal(ln, f+".channel", fmt.Errorf("%q is written by no node; it would never be satisfied", in.Channel))
			}
			if in.Count != nil && string(in.Count) != `"all"` {
				c, msg := parseCount(in.Count)
				if msg != "" || c < 1 {
					return d.fatal(ln, f+".count", fmt.Errorf("%s: want \"all\" or a number of writes ≥ 1", in.Count))
				}
				if c != len(ps) {
					return d.fatal(ln, f+".count", fmt.Errorf("%d of the %d writers of %q: reprise waits for all the requests it depends on, not the first N; use \"all\"", c, len(ps), in.Channel))
				}
			}
			for _, p := range ps {
				if p == n {
					return d.fatal(ln, f+".channel", fmt.Errorf("node %s waits for its own output %q", n, in.Channel))
				}
				gi.gates[n].addDep(p, 0)
			}
		}
		ms, err := gi.dur("nodes."+n+".min_start_delay_us", node.MinStartDelay)
		if err != nil {
			return err
		}
		gi.minStart[n] = max(gi.minStart[n], ms)
	}
	return nil
}

// graphOrder is the state of the walk in dependency order: what each
// node still waits for, and what the nodes already made were given.
type graphOrder struct {
	indeg   map[string]int
	succ    map[string][]string
	ids     map[string]int64
	delays  map[string]time.Duration // a node's own delay after its deps, for start-anchored successors
	offsets map[string]time.Duration // a node's time since the trace started, where it has one
}

// order makes the rows in dependency order (Kahn, by name for a stable
// order), resolving start-anchored edges from the predecessor's own
// gate; a node left over is on a cycle.
func (gi *graphInstance) order() ([]Row, error) {
	o := &graphOrder{indeg: map[string]int{}, succ: map[string][]string{}, ids: map[string]int64{}, delays: map[string]time.Duration{}, offsets: map[string]time.Duration{}}
	for _, n := range gi.names {
		for p := range gi.gates[n].deps {
			o.indeg[n]++
			o.succ[p] = append(o.succ[p], n)
		}
		for _, s := range gi.starts[n] {
			o.indeg[n]++
			o.succ[s.src] = append(o.succ[s.src], n)
		}
	}
	var ready []string
	for _, n := range gi.names {
		if o.indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	var rows []Row
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		r, err := gi.row(o, n, len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
		for _, s := range o.succ[n] {
			o.indeg[s]--
			if o.indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
		slices.Sort(ready)
	}
	if len(rows) != len(gi.names) {
		for _, n := range gi.names {
			if _, ok := o.ids[n]; !ok {
				return nil, gi.d.fatal(gi.ln, "nodes."+n, errors.New("is on a cycle of edges or inputs; a graph must be acyclic"))
			}
		}
	}
	return rows, nil
}

// row makes node n's row, the turn-th of the instance, once every node
// it depends on has one.
func (gi *graphInstance) row(o *graphOrder, n string, turn int) (Row, error) {
	d, ln := gi.d, gi.ln
	gt := gi.gates[n]
	for _, s := range gi.starts[n] {
		// Sent s.delay after the predecessor was sent: after what
		// it waited for, plus its own delay and this one.
		for p := range gi.gates[s.src].deps {
			gt.addDep(p, o.delays[s.src]+s.delay)
		}
		if off, ok := o.offsets[s.src]; ok {
			if !gt.hasOffset || off+s.delay > gt.offset {
				gt.offset, gt.hasOffset = off+s.delay, true
			}
		}
	}
	r := Row{Line: ln, SessionID: gi.t.ID, Turn: turn, ParentID: -1, Kind: gi.g.Nodes[n].Model, Cumulative: true}
	var delay time.Duration
	first := true
	deps := make([]string, 0, len(gt.deps))
	for p := range gt.deps {
		deps = append(deps, p)
	}
	sort.Strings(deps)
	for _, p := range deps {
		dl := gt.deps[p]
		if !first && dl != delay {
			return Row{}, d.fatal(ln, "nodes."+n, fmt.Errorf("waits %v after %s but %v after %s; reprise waits one delay after the last request it depends on: give the edges into %s one delay", dl, p, delay, deps[0], n))
		}
		delay, first = dl, false
		r.WaitFor = append(r.WaitFor, o.ids[p])
	}
	delay += gi.minStart[n]
	o.delays[n] = delay
	if len(deps) > 0 {
		r.Delay, r.HasDelay = delay, delay > 0
	}
	if gt.hasOffset || len(deps) == 0 {
		r.Offset, r.HasOffset = gt.offset+gi.minStart[n], true
		o.offsets[n] = r.Offset
	}
	if err := d.content(gi.g, gi.t, n, &r); err != nil {
		return Row{}, err
	}
	r.RequestID, r.Index = d.nextID, d.nextID
	o.ids[n] = d.nextID
	d.nextID++
	return r, nil
}

// content fills r's request from node n: its prompt with @channel
// references to the trace's initial_state spliced in.
func (d *graphIRDecoder) content(g, t *graphRecord, n string, r *Row) error {
	node := g.Nodes[n]
	ln := g.line
	field := "nodes." + n
	if len(node.Prompt) == 0 {
		return d.fatal(ln, field+".prompt", errors.New("missing or empty; a node needs its prompt messages"))
	}
	producers := map[string]bool{}
	for _, o := range g.Nodes {
		if o != nil && o.Output != "" {
			producers[o.Output] = true
		}
	}
	splice := func(s string, f string) (string, error) {
		if !strings.HasPrefix(s, "@") || len(s) < 2 {
			return s, nil
		}
		ch := s[1:]
		if producers[ch] {
			return "", d.fatal(ln, f, fmt.Errorf("%q is a node's live reply; reprise cannot splice a reply into a later prompt (a row may only extend its parent's whole conversation): write the text out, or give it in the trace's initial_state", s))
		}
		v, ok := t.State[ch]
		if !ok {
			return "", d.fatal(ln, f, fmt.Errorf("%q names no channel of initial_state in trace %q (line %d)", s, t.ID, t.line))
		}
		var text string
		if json.Unmarshal(v, &text) != nil {
			return "", d.fatal(t.line, "initial_state."+ch, errors.New("want a string"))
		}
		return text, nil
	}
	msgs := make([]map[string]any, len(node.Prompt))
	var all strings.Builder
	for i, m := range node.Prompt {
		f := fmt.Sprintf("%s.prompt[%d].content", field, i)
		if m.Role == "" {
			return d.fatal(ln, fmt.Sprintf("%s.prompt[%d].role", field, i), errors.New("missing"))
		}
		var text string
		var parts []json.RawMessage
		switch {
		case json.Unmarshal(m.Content, &text) == nil:
			s, err := splice(text, f)
			if err != nil {
				return err
			}
			msgs[i] = map[string]any{"role": m.Role, "content": s}
			all.WriteString(s + " ")
		case json.Unmarshal(m.Content, &parts) == nil:
			var b strings.Builder
			for k, p := range parts {
				var s string
				if json.Unmarshal(p, &s) != nil {
					return d.fatal(ln, fmt.Sprintf("%s[%d]", f, k), errors.New("want a string (text or an @channel reference)"))
				}
				s, err := splice(s, fmt.Sprintf("%s[%d]", f, k))
				if err != nil {
					return err
				}
				b.WriteString(s)
			}
			msgs[i] = map[string]any{"role": m.Role, "content": b.String()}
			all.WriteString(b.String() + " ")
		default:
			return d.fatal(ln, f, errors.New("want a string or an array of strings"))
		}
	}
	mj, err := json.Marshal(msgs)
	if err != nil {
		return d.fatal(ln, field+".prompt", err)
	}
	r.Raw = rawObject("messages", json.RawMessage(mj), "tools", node.RawTools, "headers", node.ExtraHeaders, "extra", node.ExtraBody)
	r.InputTokens = d.r.countTokens(all.String())
	if err := d.r.overInput(r.InputTokens); err != nil {
		return d.fatal(ln, field+".prompt", err)
	}
	if node.MaxTokens != nil {
		n, msg := parseCount(node.MaxTokens)
		if msg != "" || n < 0 {
			return d.fatal(ln, field+".max_tokens", fmt.Errorf("%s: want a whole number of tokens ≥ 0", node.MaxTokens))
		}
		r.OutputTokens = max(n, 1)
	}
	return nil
}
