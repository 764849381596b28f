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
	ln := g.line
	names := make([]string, 0, len(g.Nodes))
	producers := map[string][]string{}
	for n, node := range g.Nodes {
		if node == nil {
			return d.fatal(ln, "nodes."+n, errors.New("want a node object"))
		}
		if node.NodeType != "llm" {
			return d.fatal(ln, "nodes."+n+".node_type", fmt.Errorf("%q: only llm nodes exist", node.NodeType))
		}
		if n == "START" || n == "END" {
			return d.fatal(ln, "nodes."+n, errors.New("START and END are reserved names"))
		}
		names = append(names, n)
		if node.Output != "" {
			producers[node.Output] = append(producers[node.Output], n)
		}
	}
	sort.Strings(names)
	gates := map[string]*graphGate{}
	for _, n := range names {
		gates[n] = &graphGate{deps: map[string]time.Duration{}}
	}
	minStart := map[string]time.Duration{}
	dur := func(field string, v json.RawMessage) (time.Duration, error) {
		if v == nil {
			return 0, nil
		}
		return d.duration(ln, field, v, 3, "microseconds")
	}
	addDep := func(g *graphGate, src string, delay time.Duration) {
		if old, ok := g.deps[src]; !ok || delay > old {
			g.deps[src] = delay
		}
	}
	// Start-anchored edges refer to the predecessor's own gate; they are
	// resolved after the completion edges, in dependency order.
	type startEdge struct {
		src, field string
		delay      time.Duration
	}
	starts := map[string][]startEdge{}
	for i, e := range g.Edges {
		f := fmt.Sprintf("edges[%d]", i)
		if e.Target == "END" {
			continue
		}
		tg, ok := gates[e.Target]
		if !ok {
			return d.fatal(ln, f+".target", fmt.Errorf("%q is no node of this graph", e.Target))
		}
		if e.Source != "START" && gates[e.Source] == nil {
			return d.fatal(ln, f+".source", fmt.Errorf("%q is no node of this graph", e.Source))
		}
		ms, err := dur(f+".min_start_delay_us", e.MinStart)
		if err != nil {
			return err
		}
		done, err := dur(f+".delay_after_predecessor_us", e.AfterDone)
		if err != nil {
			return err
		}
		start, err := dur(f+".delay_after_predecessor_start_us", e.AfterStart)
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
			continue
		}
		if ms > minStart[e.Target] {
			minStart[e.Target] = ms
		}
		if e.AfterStart != nil {
			starts[e.Target] = append(starts[e.Target], startEdge{e.Source, f, start})
			continue
		}
		addDep(tg, e.Source, done)
	}
	for _, n := range names {
		node := g.Nodes[n]
		for i, in := range node.Inputs {
			f := fmt.Sprintf("nodes.%s.inputs[%d]", n, i)
			ps := producers[in.Channel]
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
				addDep(gates[n], p, 0)
			}
		}
		ms, err := dur("nodes."+n+".min_start_delay_us", node.MinStartDelay)
		if err != nil {
			return err
		}
		minStart[n] = max(minStart[n], ms)
	}
	// Dependency order (Kahn, by name for a stable order), resolving
	// start-anchored edges from the predecessor's own gate.
	indeg := map[string]int{}
	succ := map[string][]string{}
	for _, n := range names {
		for p := range gates[n].deps {
			indeg[n]++
			succ[p] = append(succ[p], n)
		}
		for _, s := range starts[n] {
			indeg[n]++
			succ[s.src] = append(succ[s.src], n)
		}
	}
	var ready []string
	for _, n := range names {
		if indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	ids := map[string]int64{}
	delays := map[string]time.Duration{}  // a node's own delay after its deps, for start-anchored successors
	offsets := map[string]time.Duration{} // a node's time since the trace started, where it has one
	var rows []Row
	for len(ready) > 0 {
		n := ready[0]
		ready = ready[1:]
		gt := gates[n]
		for _, s := range starts[n] {
			// Sent s.delay after the predecessor was sent: after what
			// it waited for, plus its own delay and this one.
			for p := range gates[s.src].deps {
				addDep(gt, p, delays[s.src]+s.delay)
			}
			if off, ok := offsets[s.src]; ok {
				if !gt.hasOffset || off+s.delay > gt.offset {
					gt.offset, gt.hasOffset = off+s.delay, true
				}
			}
		}
		r := Row{Line: ln, SessionID: t.ID, Turn: len(rows), ParentID: -1, Kind: g.Nodes[n].Model, Cumulative: true}
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
				return d.fatal(ln, "nodes."+n, fmt.Errorf("waits %v after %s but %v after %s; reprise waits one delay after the last request it depends on: give the edges into %s one delay", dl, p, delay, deps[0], n))
			}
			delay, first = dl, false
			r.WaitFor = append(r.WaitFor, ids[p])
		}
		delay += minStart[n]
		delays[n] = delay
		if len(deps) > 0 {
			r.Delay, r.HasDelay = delay, delay > 0
		}
		if gt.hasOffset || len(deps) == 0 {
			r.Offset, r.HasOffset = gt.offset+minStart[n], true
			offsets[n] = r.Offset
		}
		if err := d.content(g, t, n, &r); err != nil {
			return err
		}
		r.RequestID, r.Index = d.nextID, d.nextID
		ids[n] = d.nextID
		d.nextID++
		rows = append(rows, r)
		for _, s := range succ[n] {
			indeg[s]--
			if indeg[s] == 0 {
				ready = append(ready, s)
			}
		}
		slices.Sort(ready)
	}
	if len(rows) != len(names) {
		for _, n := range names {
			if _, ok := ids[n]; !ok {
				return d.fatal(ln, "nodes."+n, errors.New("is on a cycle of edges or inputs; a graph must be acyclic"))
			}
		}
	}
	d.pending = append(d.pending, rows...)
	g.instances++
	return nil
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
