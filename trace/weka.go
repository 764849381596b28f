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
	if err := json.Unmarshal(line, &c); err != nil {
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
	block := d.r.block
	if c.BlockSize > 0 && d.r.opts.BlockSize == 0 {
		block = c.BlockSize
	}
	if c.BlockSize < 0 {
		return d.err("block_size", "%d: want tokens ≥ 1", c.BlockSize)
	}
	if len(c.Requests) == 0 {
		return d.err("requests", "missing or empty; a conversation needs its requests")
	}
	scope := d.r.lr.line
	if c.HashIDScope == "global" {
		scope = 0
	}
	var rows []Row
	turn := 0
	var chain func(reqs []wekaReq, path, session string, prev int64, top bool) (int64, error)
	chain = func(reqs []wekaReq, path, session string, prev int64, top bool) (int64, error) {
		var joins []int64
		for k := range reqs {
			q := &reqs[k]
			p := fmt.Sprintf("%s[%d]", path, k)
			if q.Type == "subagent" {
				agent := q.AgentID
				if agent == "" {
					agent = strconv.Itoa(k)
				}
				last, err := chain(q.Requests, p+".requests", session+"/"+agent, prev, prev < 0 && top)
				if err != nil {
					return 0, err
				}
				if last >= 0 && q.Status != "async_launched" {
					joins = append(joins, last)
				}
				continue
			}
			r := Row{Index: d.nextID, Line: d.r.lr.line, ParentID: -1, RequestID: d.nextID, SessionID: session,
				Turn: turn, BlockSize: block, Cumulative: true, Kind: q.Model}
			turn++
			if prev >= 0 {
				r.WaitFor = append([]int64{prev}, joins...)
			}
			joins = nil
			in, msg := parseCount(q.In)
			if msg != "" || in < 1 {
				return 0, d.err(p+".in", "%s: want a whole number of input tokens ≥ 1", q.In)
			}
			if err := d.r.overInput(in); err != nil {
				return 0, d.r.fileErr(d.r.lr.line, p+".in", err)
			}
			r.InputTokens = in
			if q.Out != nil {
				out, msg := parseCount(q.Out)
				if msg != "" || out < 0 {
					return 0, d.err(p+".out", "%s: want a whole number of output tokens ≥ 0", q.Out)
				}
				r.OutputTokens = out
			}
			if q.HashIDs != nil {
				if need := (in + block - 1) / block; len(q.HashIDs) != need {
					return 0, d.err(p+".hash_ids", "%d ids but in %d needs %d at block size %d; fix the row or pass --block-size with the block size the trace was hashed with",
						len(q.HashIDs), in, need, block)
				}
				r.HashIDs = make([]uint64, len(q.HashIDs))
				for i, h := range q.HashIDs {
					key := wekaKey{scope, h}
					g, ok := d.ids[key]
					if !ok {
						g = d.nextIDs
						d.nextIDs++
						d.ids[key] = g
					}
					r.HashIDs[i] = g
				}
			}
			if q.ThinkTime != nil {
				t, err := d.seconds(p+".think_time", q.ThinkTime)
				if err != nil {
					return 0, err
				}
				r.Delay, r.HasDelay = t, true
			}
			if top || prev < 0 {
				if q.T == nil {
					if prev < 0 {
						return 0, d.err(p+".t", "missing; the first request of a conversation needs its time t (seconds)")
					}
				} else {
					t, err := d.seconds(p+".t", q.T)
					if err != nil {
						return 0, err
					}
					r.Offset, r.HasOffset = t, true
				}
			}
			if r.HasOffset && r.HasDelay && prev < 0 {
				r.HasDelay, r.Delay = false, 0 // a root goes at its time
			}
			prev = r.RequestID
			d.nextID++
			rows = append(rows, r)
		}
		return prev, nil
	}
	if _, err := chain(c.Requests, "requests", id, -1, true); err != nil {
		return err
	}
	d.convs[id] = d.r.lr.line
	d.pending = append(d.pending[:0], rows...)
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
