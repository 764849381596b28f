package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// wekaConv is one Weka / kv-cache-tester conversation (one JSON object per
// line). Times stay raw so they convert exactly.
type wekaConv struct {
	ID          json.RawMessage `json:"id"`
	BlockSize   int             `json:"block_size"`
	HashIDScope string          `json:"hash_id_scope"`
	Requests    []wekaReq       `json:"requests"`
}

type wekaReq struct {
	T         json.RawMessage `json:"t"`
	Type      string          `json:"type"`
	Model     string          `json:"model"`
	In        json.RawMessage `json:"in"`
	Out       json.RawMessage `json:"out"`
	HashIDs   []int64         `json:"hash_ids"`
	ThinkTime json.RawMessage `json:"think_time"`
	AgentID   string          `json:"agent_id"`
	Status    string          `json:"status"`
	Requests  []wekaReq       `json:"requests"`
}

// wekaDecoder reads Weka agentic-coding traces (kv-cache-tester, AIPerf
// weka_trace): one conversation per line, its requests (and its
// sub-agents' nested requests) emitted as dependent rows (design 0008).
type wekaDecoder struct {
	r       *Reader
	pending []Row
	nextID  int64
	ids     map[wekaKey]uint64 // (conversation, local hash id) → global id
	nextIDs uint64
	convs   map[string]int64 // conversation id → line, for duplicates
}

type wekaKey struct {
	conv int64 // the conversation's line
	id   int64
}

func newWekaDecoder(r *Reader) *wekaDecoder {
	return &wekaDecoder{r: r, ids: map[wekaKey]uint64{}, convs: map[string]int64{}}
}

func (d *wekaDecoder) next(row *Row) error {
	for len(d.pending) == 0 {
		line, err := d.r.nextLine()
		if err != nil {
			return err
		}
		if err := d.conversation(line); err != nil {
			return err
		}
	}
	*row = d.pending[0]
	d.pending = d.pending[1:]
	return nil
}

// wekaErr is a row error of the conversation on the current line; field
// is a JSON path such as requests[2].hash_ids.
func (d *wekaDecoder) err(field, format string, args ...any) error {
	return d.r.fileErr(d.r.lr.line, field, fmt.Errorf(format, args...))
}

// conversation turns one line into rows. Within a chain (the conversation's
// top-level requests, or one sub-agent's) each request waits for the one
// before it; a sub-agent's first request waits for the request before its
// marker, and the request after the marker waits for the sub-agent's last
// request as well (a join; adjacent sub-agents form one fan-out). A
// sub-agent with no request after it runs in the background. Each
// request waits its think_time after its dependencies; a top-level request
// keeps its t as its timestamp (the open policy sends it no earlier).
func (d *wekaDecoder) conversation(line []byte) error {
	var c wekaConv
	if err := d.unmarshal(line, &c); err != nil {
		return err
	}
	id := strings.Trim(string(c.ID), `"`)
	if id == "" {
		id = "line-" + strconv.FormatInt(d.r.lr.line, 10)
	}
	if l, dup := d.convs[id]; dup {
		return d.err("id", "%q is already the conversation of line %d", id, l)
	}
	if c.HashIDScope != "" && c.HashIDScope != "local" && c.HashIDScope != "global" {
		return d.err("hash_id_scope", "%q: want local or global", c.HashIDScope)
	}
	w := wekaChain{d: d, block: d.r.block, scope: d.r.lr.line}
	if c.BlockSize > 0 && d.r.opts.BlockSize == 0 {
		w.block = c.BlockSize
	}
	if c.BlockSize < 0 {
		return d.err("block_size", "%d: want tokens ≥ 1", c.BlockSize)
	}
	if len(c.Requests) == 0 {
		return d.err("requests", "missing or empty; a conversation needs its requests")
	}
	if c.HashIDScope == "global" {
		w.scope = 0
	}
	if _, err := w.chain(c.Requests, "requests", id, -1, true); err != nil {
		return err
	}
	d.convs[id] = d.r.lr.line
	d.pending = append(d.pending[:0], w.rows...)
	return nil
}

// unmarshal decodes line into c, with a row error naming the field (or
// the offset of a syntax error) when it does not decode.
func (d *wekaDecoder) unmarshal(line []byte, c *wekaConv) error {
	err := json.Unmarshal(line, c)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return d.r.fileErr(d.r.lr.line, "", &jsonSyntax{int(se.Offset), "invalid JSON: one conversation object per line (a pretty-printed file: jq -c . FILE)"})
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return d.err(te.Field, "want %s, not a JSON %s", te.Type, te.Value)
	}
	return d.err("", "%v", err)
}

// wekaChain turns the requests of one conversation into rows (see
// [wekaDecoder.conversation] for how they wait for each other).
type wekaChain struct {
	d     *wekaDecoder
	block int   // tokens per hash id
	scope int64 // the hash ids' scope: the conversation's line, or 0 for global
	turn  int   // the Turn of the next row
	rows  []Row
}

// chain appends the rows of reqs, the requests at JSON path path, in
// session; the first waits for prev (none when < 0), each later one for
// the one before it. top says whether reqs are the conversation's
// top-level requests (or sub-agents spawned before any of them). It
// returns the RequestID of the last row of the chain, or prev when reqs
// made none.
func (w *wekaChain) chain(reqs []wekaReq, path, session string, prev int64, top bool) (int64, error) {
	var joins []int64
	for k := range reqs {
		q := &reqs[k]
		p := fmt.Sprintf("%s[%d]", path, k)
		if q.Type == "subagent" {
			agent := q.AgentID
			if agent == "" {
				agent = strconv.Itoa(k)
			}
			last, err := w.chain(q.Requests, p+".requests", session+"/"+agent, prev, prev < 0 && top)
			if err != nil {
				return 0, err
			}
			if last >= 0 && q.Status != "async_launched" {
				joins = append(joins, last)
			}
			continue
		}
		r, err := w.request(q, p, session, prev, joins, top)
		if err != nil {
			return 0, err
		}
		joins = nil
		prev = r.RequestID
		w.d.nextID++
		w.rows = append(w.rows, r)
	}
	return prev, nil
}

// request returns the row of q, the request at JSON path p, in session:
// it waits for prev (none when < 0) and joins, the sub-agents that ran
// since, and keeps its time t when top or the first of its chain.
func (w *wekaChain) request(q *wekaReq, p, session string, prev int64, joins []int64, top bool) (Row, error) {
	d := w.d
	r := Row{Index: d.nextID, Line: d.r.lr.line, ParentID: -1, RequestID: d.nextID, SessionID: session,
		Turn: w.turn, BlockSize: w.block, Cumulative: true, Kind: q.Model}
	w.turn++
	if prev >= 0 {
		r.WaitFor = append([]int64{prev}, joins...)
	}
	in, msg := parseCount(q.In)
	if msg != "" || in < 1 {
		return Row{}, d.err(p+".in", "%s: want a whole number of input tokens ≥ 1", q.In)
	}
	if err := d.r.overInput(in); err != nil {
		return Row{}, d.r.fileErr(d.r.lr.line, p+".in", err)
	}
	r.InputTokens = in
	if q.Out != nil {
		out, msg := parseCount(q.Out)
		if msg != "" || out < 0 {
			return Row{}, d.err(p+".out", "%s: want a whole number of output tokens ≥ 0", q.Out)
		}
		r.OutputTokens = out
	}
	if q.HashIDs != nil {
		ids, err := w.hashIDs(q.HashIDs, p, in)
		if err != nil {
			return Row{}, err
		}
		r.HashIDs = ids
	}
	if err := w.times(&r, q, p, prev, top); err != nil {
		return Row{}, err
	}
	return r, nil
}

// hashIDs maps ids, the hash ids of the request at p with in input
// tokens, to global ids, numbering those not seen before in the scope.
func (w *wekaChain) hashIDs(ids []int64, p string, in int) ([]uint64, error) {
	d := w.d
	if need := (in + w.block - 1) / w.block; len(ids) != need {
		return nil, d.err(p+".hash_ids", "%d ids but in %d needs %d at block size %d; fix the row or pass --block-size with the block size the trace was hashed with",
			len(ids), in, need, w.block)
	}
	out := make([]uint64, len(ids))
	for i, h := range ids {
		key := wekaKey{w.scope, h}
		g, ok := d.ids[key]
		if !ok {
			g = d.nextIDs
			d.nextIDs++
			d.ids[key] = g
		}
		out[i] = g
	}
	return out, nil
}

// times sets r's delay (think_time) and, when top or the first of its
// chain (prev < 0), its offset (t), which a root needs; a root with a
// time goes at it, without the delay.
func (w *wekaChain) times(r *Row, q *wekaReq, p string, prev int64, top bool) error {
	d := w.d
	if q.ThinkTime != nil {
		t, err := d.seconds(p+".think_time", q.ThinkTime)
		if err != nil {
			return err
		}
		r.Delay, r.HasDelay = t, true
	}
	if top || prev < 0 {
		if q.T == nil {
			if prev < 0 {
				return d.err(p+".t", "missing; the first request of a conversation needs its time t (seconds)")
			}
		} else {
			t, err := d.seconds(p+".t", q.T)
			if err != nil {
				return err
			}
			r.Offset, r.HasOffset = t, true
		}
	}
	if r.HasOffset && r.HasDelay && prev < 0 {
		r.HasDelay, r.Delay = false, 0 // a root goes at its time
	}
	return nil
}

// seconds parses a non-negative time in seconds exactly.
func (d *wekaDecoder) seconds(field string, v json.RawMessage) (time.Duration, error) {
	ns, st := parseFixed(v, 9)
	switch {
	case st != fixedOK:
		return 0, d.err(field, "%s is not a number of seconds", v)
	case ns < 0:
		return 0, d.err(field, "%s is negative; want seconds ≥ 0", v)
	}
	return time.Duration(ns), nil
}
