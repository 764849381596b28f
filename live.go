package reprise

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/dashboard"
	"github.com/reprise-bench/reprise/internal/telemetry"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// The dashboard's window: its quantiles and rates are over the last
// liveWindowSteps steps of liveStep, and each step adds a sparkline point.
const (
	liveStep        = time.Second
	liveWindowSteps = 10
	// liveSeriesPoints bounds each sparkline's points (a wide terminal
	// shows at most this many).
	liveSeriesPoints = 240
)

// liveHists are the progress histograms the dashboard shows, in display
// order, with their names and summary.json tags.
var liveHists = [...]struct {
	name, tag string
	h         func(*progress) *hist
}{
	{"TTFT", "time_to_first_token", func(p *progress) *hist { return &p.ttft }},
	{"TTFO", "time_to_first_output_token", func(p *progress) *hist { return &p.ttfo }},
	{"ITL", "inter_token_latency", func(p *progress) *hist { return &p.itl }},
	{"latency", "request_latency", func(p *progress) *hist { return &p.e2e }},
	{"lateness", "schedule_lateness", func(p *progress) *hist { return &p.lateness }},
	{"read lag", "client_read_lag", func(p *progress) *hist { return &p.readLag }},
}

// Indices of liveHists the quality checks and sparklines read.
const (
	liveTTFT     = 0
	liveITL      = 2
	liveLateness = 4
	liveReadLag  = 5
)

// liveFrame is a copy of the progress counters at one instant.
type liveFrame struct {
	at                                time.Duration // since the progress start
	sent, done, failed, out, intended int64
	h                                 [len(liveHists)][]uint64
}

func newLiveFrame() *liveFrame {
	f := &liveFrame{}
	for i := range f.h {
		f.h[i] = make([]uint64, histBuckets)
	}
	return f
}

// take copies p's counters. A request counts as sent, then done, then
// (maybe) failed, so they are read in the other order: a snapshot never
// has more failed requests than done (skipped ones apart, which are never
// sent) or more done than sent.
func (f *liveFrame) take(p *progress, at time.Duration) {
	f.at = at
	f.failed = p.errors.Load()
	f.done = p.done.Load()
	f.sent, f.out, f.intended = p.sent.Load(), p.outTokens.Load(), p.maxIntended.Load()
	for i := range liveHists {
		liveHists[i].h(p).copyTo(f.h[i])
	}
}

func (f *liveFrame) copyFrom(g *liveFrame) {
	h := f.h
	*f = *g
	f.h = h
	for i := range f.h {
		copy(f.h[i], g.h[i])
	}
}

// liveView builds the dashboard's snapshots from a run's progress: the
// counters as they are, the run's quantiles from a copy of its
// histograms, the last window's from the difference to the copy kept
// liveWindowSteps steps ago, and a sparkline point per step. It is not
// safe for concurrent use (the dashboard calls it from one goroutine); it
// reads the progress with atomic loads only, so the send path never waits
// for it.
type liveView struct {
	p      *progress
	title  string
	now    func() time.Duration // since the progress start
	eta    func(el time.Duration, sent, done int64, intended float64) time.Duration
	budget time.Duration // the lateness budget of the quality verdict
	server func() *dashboard.Server
	state  func() dashboard.State

	cur    *liveFrame
	frames []*liveFrame // oldest first, at most liveWindowSteps+1
	spare  []*liveFrame
	series [5][]float64 // req/s, TTFT p50 ms, ITL p50 ms, in flight, tokens/s
	kv     []float64    // KV-cache usage %, when scraped
}

// seriesNames are the sparklines, in liveView.series' order.
var seriesNames = [...]struct{ name, unit string }{
	{"req/s", "/s"}, {"TTFT p50", "ms"}, {"ITL p50", "ms"}, {"in flight", "n"}, {"tokens/s", "/s"},
}

func (v *liveView) snapshot() dashboard.Snapshot {
	el := v.now()
	if v.cur == nil {
		v.cur = newLiveFrame()
	}
	cur := v.cur
	cur.take(v.p, el)
	p := v.p
	inflight := p.inflight.Load()
	var sv *dashboard.Server
	if v.server != nil {
		sv = v.server()
	}
	if n := len(v.frames); n == 0 || el-v.frames[n-1].at >= liveStep {
		v.push(cur, inflight, sv)
	}
	s := dashboard.Snapshot{Title: v.title, State: dashboard.Running, Elapsed: el, ETA: -1, Planned: -1,
		Sent: cur.sent, Done: cur.done, InFlight: inflight, Failed: cur.failed, Server: sv}
	if v.state != nil {
		s.State = v.state()
	}
	if p.planned > 0 {
		s.Planned = p.planned
	}
	for i := range errorKinds {
		if n := p.kinds[i].Load(); n > 0 {
			s.Errors = append(s.Errors, dashboard.KindCount{Kind: string(errorKinds[i]), Count: n})
		}
	}
	slices.SortStableFunc(s.Errors, func(a, b dashboard.KindCount) int { return int(b.Count - a.Count) })

	base := v.frames[0]
	s.Window = cur.at - base.at
	win := s.Window.Seconds()
	s.Intended, s.Achieved, s.OutputTokens = dashboard.Rate{Window: -1, Run: -1}, dashboard.Rate{Window: -1, Run: -1}, dashboard.Rate{Window: -1, Run: -1}
	if win > 0 {
		s.Achieved.Window = float64(cur.sent-base.sent) / win
		s.OutputTokens.Window = float64(cur.out-base.out) / win
		// Requests sent per second of schedule they covered: from the
		// window's start, or from the first request when it is in the
		// window.
		bi, bs := base.intended, base.sent
		if bi == 0 {
			bi, bs = p.firstIntended.Load(), 1
		}
		if di := cur.intended - bi; di > 0 && bi > 0 && cur.sent > bs {
			s.Intended.Window = float64(cur.sent-bs) / (float64(di) / 1e9)
		}
	}
	if first := p.firstIntended.Load(); first > 0 && cur.intended > first && cur.sent > 1 {
		s.Intended.Run = float64(cur.sent-1) / (float64(cur.intended-first) / 1e9)
	}
	if el > 0 {
		s.Achieved.Run = float64(cur.sent) / el.Seconds()
		s.OutputTokens.Run = float64(cur.out) / el.Seconds()
	}
	if v.eta != nil && s.State == dashboard.Running {
		s.ETA = v.eta(el, cur.sent, cur.done, s.Intended.Window)
	}
	for i, lh := range liveHists {
		s.Metrics = append(s.Metrics, dashboard.Metric{Name: lh.name, Window: quantiles(cur.h[i], base.h[i]), Run: quantiles(cur.h[i], nil)})
	}
	s.Quality = v.quality(&s)
	for i, sn := range seriesNames {
		s.Series = append(s.Series, dashboard.Series{Name: sn.name, Unit: sn.unit, Points: slices.Clone(v.series[i])})
	}
	if sv != nil {
		s.Series = append(s.Series, dashboard.Series{Name: "KV cache", Unit: "%", Points: slices.Clone(v.kv)})
	}
	return s
}

// push keeps cur in the window's ring and adds each sparkline's point of
// the step that ends with it.
func (v *liveView) push(cur *liveFrame, inflight int64, sv *dashboard.Server) {
	var f *liveFrame
	if n := len(v.spare); n > 0 {
		f, v.spare = v.spare[n-1], v.spare[:n-1]
	} else {
		f = newLiveFrame()
	}
	f.copyFrom(cur)
	if n := len(v.frames); n > 0 {
		prev := v.frames[n-1]
		dt := (f.at - prev.at).Seconds()
		add := func(i int, x float64) {
			v.series[i] = append(v.series[i], x)
			if len(v.series[i]) > liveSeriesPoints {
				v.series[i] = v.series[i][1:]
			}
		}
		add(0, float64(f.sent-prev.sent)/dt)
		for k, hi := range []int{liveTTFT, liveITL} {
			q := quantiles(f.h[hi], prev.h[hi])
			x := math.NaN()
			if q.N > 0 {
				x = float64(q.P50) / 1e6
			}
			add(1+k, x)
		}
		add(3, float64(inflight))
		add(4, float64(f.out-prev.out)/dt)
		kv := math.NaN()
		if sv != nil && sv.Up && sv.KVUsage >= 0 {
			kv = 100 * sv.KVUsage
		}
		v.kv = append(v.kv, kv)
		if len(v.kv) > liveSeriesPoints {
			v.kv = v.kv[1:]
		}
	}
	v.frames = append(v.frames, f)
	if len(v.frames) > liveWindowSteps+1 {
		v.spare = append(v.spare, v.frames[0])
		v.frames = slices.Delete(v.frames, 0, 1)
	}
}

// quality is the live measurement-quality verdict, the checks of
// summary.Quality that the live quantiles allow: schedule lateness p99
// over the budget, and a read lag p90 over the median gap between tokens.
func (v *liveView) quality(s *dashboard.Snapshot) dashboard.Quality {
	if s.Done == 0 {
		return dashboard.Quality{}
	}
	q := dashboard.Quality{Verdict: summary.QualityGood}
	if l := s.Metrics[liveLateness].Run; l.N > 0 && v.budget > 0 && l.P99 > v.budget {
		q.Reasons = append(q.Reasons, fmt.Sprintf("schedule lateness p99 %s > %s", dashboard.FormatDuration(l.P99), dashboard.FormatDuration(v.budget)))
	}
	if lag, itl := s.Metrics[liveReadLag].Run, s.Metrics[liveITL].Run; lag.N > 0 && itl.N > 0 && lag.P90 > itl.P50 {
		q.Reasons = append(q.Reasons, fmt.Sprintf("read lag p90 %s > ITL p50 %s", dashboard.FormatDuration(lag.P90), dashboard.FormatDuration(itl.P50)))
	}
	if len(q.Reasons) > 0 {
		q.Verdict = summary.QualityDegraded
	}
	return q
}

// final is the last snapshot: the counters as the run left them, and the
// run's column from the summary (the one place statistics are computed),
// with its rates and quality verdict.
func (v *liveView) final(sum *summary.Summary) dashboard.Snapshot {
	s := v.snapshot()
	s.ETA = 0
	switch s.State {
	case dashboard.Stopping, dashboard.Aborting:
		s.State = dashboard.Interrupted // a stop key or Ctrl-C ended it early
	default:
		s.State = dashboard.Finished
	}
	if sum == nil {
		return s
	}
	for i, lh := range liveHists {
		st := sum.Metrics[lh.tag]
		if st == nil {
			s.Metrics[i].Run = dashboard.Quantiles{}
			continue
		}
		ms := func(x float64) time.Duration { return time.Duration(math.Round(x * 1e6)) }
		s.Metrics[i].Run = dashboard.Quantiles{N: int64(st.Count), P50: ms(st.P50), P90: ms(st.P90), P99: ms(st.P99)}
	}
	s.Intended.Run, s.Achieved.Run, s.OutputTokens.Run = sum.IntendedRate, sum.AchievedRate, sum.OutputTokenThroughput
	q := sum.Quality()
	s.Quality = dashboard.Quality{Verdict: q.Verdict, Reasons: q.Reasons}
	return s
}

// quantiles are the p50, p90 and p99 of the values counted in cur and not
// in base (nil: none), each the middle of its bucket (within ±1.6 %).
func quantiles(cur, base []uint64) dashboard.Quantiles {
	var n uint64
	for i := range cur {
		n += cur[i] - at(base, i)
	}
	if n == 0 {
		return dashboard.Quantiles{}
	}
	out := dashboard.Quantiles{N: int64(n)}
	qs := [...]float64{0.5, 0.9, 0.99}
	dst := [...]*time.Duration{&out.P50, &out.P90, &out.P99}
	k := 0
	var c uint64
	for i := range cur {
		c += cur[i] - at(base, i)
		for k < len(qs) && c >= uint64(qs[k]*float64(n-1))+1 {
			*dst[k] = time.Duration(histMid(i))
			k++
		}
		if k == len(qs) {
			break
		}
	}
	return out
}

func at(b []uint64, i int) uint64 {
	if b == nil {
		return 0
	}
	return b[i]
}

// histMid is the middle of bucket i of a [hist].
func histMid(i int) int64 {
	if i < 64 {
		return int64(i)
	}
	lo, hi := histLow(i), histLow(i+1)
	return int64(lo + (hi-lo)/2)
}

// scheduleLength is how long the schedule of c sends, from its first
// request, when the plan says: --duration; a request count at a constant
// or ramped rate; or the span of a held fixed-schedule trace at its
// speedup. Negative when it cannot tell (a closed loop, a streamed trace).
//
// A rate ramped linearly from 0 to R over T has sent R·t²/(2T) requests at
// t ≤ T, so N requests take √(2NT/R) when N ≤ RT/2 and T + (N − RT/2)/R
// otherwise.
func scheduleLength(c replay.Config, mode replay.Mode, requests int, rows []trace.Row) time.Duration {
	d := time.Duration(-1)
	switch {
	case mode == replay.ModeRate && c.RequestRate > 0 && requests > 0:
		n, r, t := float64(requests), c.RequestRate, c.RateRamp.Seconds()
		s := n / r
		if t > 0 {
			if n <= r*t/2 {
				s = math.Sqrt(2 * n * t / r)
			} else {
				s = t + (n-r*t/2)/r
			}
		}
		d = time.Duration(s * 1e9)
	case mode == replay.ModeFixed && len(rows) > 0:
		lo, hi := time.Duration(math.MaxInt64), time.Duration(-1)
		for i := range rows {
			if r := &rows[i]; r.HasOffset {
				lo, hi = min(lo, r.Offset), max(hi, r.Offset)
			}
		}
		if hi < 0 {
			break
		}
		sp := c.Speedup
		if sp <= 0 {
			sp = 1
		}
		d = time.Duration(float64(hi-lo) / sp)
	}
	if c.Duration > 0 && (d < 0 || c.Duration < d) {
		d = c.Duration
	}
	return d
}

// liveServer keeps the last scrape of the first scrape target: its
// KV-cache usage, running and queued requests (telemetry.Role's
// "kv_usage", "running" and "waiting", each from the family a server
// names first) for the dashboard. Safe for concurrent use.
type liveServer struct {
	mu     sync.Mutex
	target string
	at     time.Time
	up     bool
	vals   [3]float64 // kv_usage, running, waiting; negative when absent
}

var liveRoles = [3]string{"kv_usage", "running", "waiting"}

// add takes in one scrape's samples (of one target); those of any target
// but the first one seen are ignored.
func (l *liveServer) add(samples []record.MetricSample) {
	if len(samples) == 0 {
		return
	}
	vals, ranks := [3]float64{-1, -1, -1}, [3]int{math.MaxInt, math.MaxInt, math.MaxInt}
	up := true
	for i := range samples {
		s := &samples[i]
		if s.Metric == telemetry.MetricScrapeUp {
			up = s.Value != 0
			continue
		}
		if s.Part != "" {
			continue
		}
		role, rank := telemetry.Role(s.Metric)
		for k, r := range liveRoles {
			if role != r {
				continue
			}
			switch {
			case rank < ranks[k]:
				vals[k], ranks[k] = s.Value, rank
			case rank == ranks[k]:
				vals[k] += s.Value // summed over the family's label sets
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.target == "" {
		l.target = samples[0].Target
	}
	if samples[0].Target != l.target {
		return
	}
	l.at, l.up, l.vals = time.Now(), up, vals
}

// get is the last scrape for the dashboard; nil before the first.
func (l *liveServer) get() *dashboard.Server {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at.IsZero() {
		return nil
	}
	return &dashboard.Server{Target: l.target, KVUsage: l.vals[0], Running: l.vals[1], Waiting: l.vals[2],
		Age: time.Since(l.at), Up: l.up}
}
