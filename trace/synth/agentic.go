package synth

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// AgenticConfig configures [GenerateAgentic]: tasks of dependent requests
// (design 0008), each a tree in which every request above the last level
// fans out to FanOut children that wait for it to complete, then for a
// think time and a tool time. Build it with [NewAgenticConfig].
type AgenticConfig struct {
	// Seed seeds every draw.
	Seed uint64
	// BlockSize is the tokens per hash id (0: 512, Mooncake's).
	BlockSize int
	// Tasks is the number of tasks; Rate their mean arrival rate per
	// second (Poisson).
	Tasks int
	Rate  float64
	// FanOut is the children of every request above the last level;
	// Depth the levels of a task (1: a single request).
	FanOut, Depth int
	// ThinkTime and ToolTime are the delay and tool time of a dependent
	// request after its parent completed: a mean, and a standard
	// deviation (> 0 draws a lognormal).
	ThinkTime, ThinkTimeStddev time.Duration
	ToolTime, ToolTimeStddev   time.Duration
	// SystemPrompts shared system prompts of SystemPromptTokens tokens:
	// each task's root starts with one, drawn uniformly (0: none).
	SystemPrompts      int
	SystemPromptTokens int
	// ISL is the distribution of each request's new prompt tokens (a
	// child's prompt is its parent's full blocks plus these), OSL of its
	// output tokens.
	ISL, OSL Dist
}

// NewAgenticConfig returns the defaults: seed [DefaultSeed], 512-token
// blocks, fan-out 4, depth 3, ISL [DefaultISL], OSL [DefaultOSL]; the
// caller sets Tasks and Rate.
func NewAgenticConfig() AgenticConfig {
	return AgenticConfig{Seed: DefaultSeed, BlockSize: 512, FanOut: 4, Depth: 3, ISL: Fixed(DefaultISL), OSL: Fixed(DefaultOSL)}
}

// maxTaskRows bounds the requests of one task (FanOut^Depth grows fast).
const maxTaskRows = 1 << 20

// taskRows returns the requests of one task: 1 + F + … + F^(D−1).
func (c AgenticConfig) taskRows() int {
	n, level := 0, 1
	for range c.Depth {
		n += level
		if n > maxTaskRows {
			return maxTaskRows + 1
		}
		level *= c.FanOut
	}
	return n
}

// Validate reports every invalid setting at once.
func (c AgenticConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Tasks < 1 {
		bad("tasks %d: want at least 1", c.Tasks)
	}
	if !(c.Rate > 0) || math.IsInf(c.Rate, 0) {
		bad("rate %g: want tasks per second > 0", c.Rate)
	}
	if c.FanOut < 1 {
		bad("fan-out %d: want at least 1", c.FanOut)
	}
	if c.Depth < 1 {
		bad("depth %d: want at least 1 level", c.Depth)
	}
	if c.FanOut >= 1 && c.Depth >= 1 && c.taskRows() > maxTaskRows {
		bad("fan-out %d and depth %d make more than %d requests per task; lower one", c.FanOut, c.Depth, maxTaskRows)
	}
	if c.BlockSize < 0 {
		bad("block size %d: want tokens ≥ 1", c.BlockSize)
	}
	for _, d := range []struct {
		name      string
		mean, std time.Duration
	}{{"think time", c.ThinkTime, c.ThinkTimeStddev}, {"tool time", c.ToolTime, c.ToolTimeStddev}} {
		if d.mean < 0 || d.std < 0 || (d.std > 0 && d.mean == 0) {
			bad("%s %v ± %v: want a mean ≥ 0 and a standard deviation ≥ 0 (only with a mean)", d.name, d.mean, d.std)
		}
	}
	if c.SystemPrompts < 0 || c.SystemPromptTokens < 0 || (c.SystemPrompts > 0) != (c.SystemPromptTokens > 0) {
		bad("system prompts %d of %d tokens: give both, or neither", c.SystemPrompts, c.SystemPromptTokens)
	}
	if err := c.ISL.validate("isl"); err != nil {
		errs = append(errs, err)
	}
	if err := c.OSL.validate("osl"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// drawDuration draws a duration of mean m and standard deviation s
// (lognormal when s > 0).
func drawDuration(r *rng, m, s time.Duration) time.Duration {
	if s == 0 || m == 0 {
		return m
	}
	mean, sd := float64(m), float64(s)
	s2 := math.Log1p(sd * sd / (mean * mean))
	mu := math.Log(mean) - s2/2
	v := math.Exp(mu + math.Sqrt(s2)*r.normal())
	if v > math.MaxInt64/2 {
		v = math.MaxInt64 / 2
	}
	return time.Duration(v).Round(time.Microsecond)
}

// GenerateAgentic returns cfg's tasks as agentic Mooncake rows (request
// ids, wait_for, delay, tool_wait_ms, cumulative input lengths and hash
// ids), every row after the row it waits for. A root arrives at its task's
// time and starts with its system prompt's blocks (shared by every task
// that drew it); a child's prompt is its parent's full blocks plus its
// own new tokens, so `analyze-trace` measures the reuse in dependency
// order. Tasks arrive in order; a task's rows are listed level by level.
func GenerateAgentic(cfg AgenticConfig) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, settings(err)
	}
	bs := cfg.BlockSize
	if bs == 0 {
		bs = 512
	}
	arrivals := newRNG(cfg.Seed, streamArrivals)
	think := newRNG(cfg.Seed, streamThink)
	isl := newRNG(cfg.Seed, streamISL)
	osl := newRNG(cfg.Seed, streamOSL)
	paths := newRNG(cfg.Seed, streamPaths)
	var next uint64
	newID := func() uint64 { next++; return next - 1 }
	// Each system prompt's full blocks get their ids once.
	sysIDs := make([][]uint64, cfg.SystemPrompts)
	for p := range sysIDs {
		for range cfg.SystemPromptTokens / bs {
			sysIDs[p] = append(sysIDs[p], newID())
		}
	}
	rows := make([]trace.Row, 0, cfg.Tasks*cfg.taskRows())
	var at time.Duration
	for task := range cfg.Tasks {
		if task > 0 {
			at += time.Duration(arrivals.exp() / cfg.Rate * 1e9)
		}
		level := []int{len(rows)}
		root := trace.Row{Offset: at, HasOffset: true, ParentID: -1, BlockSize: bs, Cumulative: true}
		var prefix []uint64
		prefixTokens := 0
		if cfg.SystemPrompts > 0 {
			p := paths.intN(cfg.SystemPrompts)
			prefix, prefixTokens = sysIDs[p], cfg.SystemPromptTokens
		}
		rows = append(rows, agenticRow(root, prefix, prefixTokens, cfg.ISL.draw(isl), bs, newID))
		for d := 1; d < cfg.Depth; d++ {
			var below []int
			for _, p := range level {
				for range cfg.FanOut {
					parent := &rows[p]
					full := parent.InputTokens / bs
					c := trace.Row{ParentID: -1, BlockSize: bs, Cumulative: true, WaitFor: []int64{int64(p)},
						Delay: drawDuration(think, cfg.ThinkTime, cfg.ThinkTimeStddev), HasDelay: true,
						ToolWait: drawDuration(think, cfg.ToolTime, cfg.ToolTimeStddev)}
					below = append(below, len(rows))
					rows = append(rows, agenticRow(c, parent.HashIDs[:full], full*bs, cfg.ISL.draw(isl), bs, newID))
				}
			}
			level = below
		}
		for i := len(rows) - cfg.taskRows(); i < len(rows); i++ {
			rows[i].RequestID, rows[i].Index, rows[i].Line = int64(i), int64(i), int64(i)+1
			rows[i].OutputTokens = cfg.OSL.draw(osl)
		}
	}
	return &Result{Rows: rows, BlockSize: bs, Format: trace.FormatMooncake}, nil
}

// agenticRow fills r's prompt: the prefix blocks (prefixTokens tokens)
// then n new tokens in new blocks. Request ids are row positions.
func agenticRow(r trace.Row, prefix []uint64, prefixTokens, n, bs int, newID func() uint64) trace.Row {
	r.InputTokens = min(prefixTokens+n, maxTokens)
	r.HashIDs = append([]uint64(nil), prefix...)
	for len(r.HashIDs)*bs < r.InputTokens {
		r.HashIDs = append(r.HashIDs, newID())
	}
	return r
}
