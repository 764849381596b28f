package replay

import (
	"errors"
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// ErrLatenessBudget is wrapped by [Stats.Check]'s error when the p99
// lateness of the measured requests exceeded [Config.MaxLateness]. The
// reprise command maps it to exit code 4.
var ErrLatenessBudget = errors.New("schedule lateness over budget")

// Stats summarises how well a run kept its schedule. Counts cover the
// measured (profile) phase unless they say otherwise.
type Stats struct {
	Mode Mode
	// Dispatched counts measured jobs handed to senders; Warmup the
	// warmup jobs (excluded from everything else); Completed every job
	// whose Handle returned (warmup included).
	Dispatched int64
	Warmup     int64
	Completed  int64
	// Late counts jobs later than LateThreshold; Waited those that found
	// no free sender or session slot; Shifted those whose time LateShift
	// moved; Skipped the jobs LateSkip dropped (rate mode: the
	// ticks dropped). None of them is ever silent.
	Late    int64
	Waited  int64
	Shifted int64
	Skipped int64
	// Shift is the total shift LateShift applied to the schedule.
	Shift time.Duration

	// Lateness summarises DispatchedNS − IntendedNS of measured jobs.
	Lateness Percentiles
	// SessionDelay sums and bounds the waits caused by a session's own
	// previous turn (not lateness).
	SessionDelayTotal time.Duration
	SessionDelayMax   time.Duration

	// IntendedRate and AchievedRate are measured jobs per second over the
	// span of their intended and their dispatch times.
	IntendedRate float64
	AchievedRate float64
	// Elapsed is the run's wall time; StopReason why it stopped issuing.
	Elapsed    time.Duration
	StopReason string

	// SpinShare is the fraction of Elapsed the dispatcher spent spinning
	// (the core share the precision costs); DispatcherCPU is its
	// thread's CPU time (getrusage RUSAGE_THREAD; 0 when unavailable);
	// SpinWindow the adaptive spin window at the end.
	SpinShare     float64
	DispatcherCPU time.Duration
	SpinWindow    time.Duration

	// MaxLateness echoes the budget; LatenessBudgetExceeded reports that
	// Lateness.P99 exceeded it.
	MaxLateness            time.Duration
	LatenessBudgetExceeded bool
}

// Check returns a [*FieldError] for MaxLateness wrapping
// [ErrLatenessBudget] when the lateness budget was exceeded, else nil.
func (s *Stats) Check() error {
	if s.LatenessBudgetExceeded {
		return fieldError("MaxLateness", "%w: p99 lateness %v > {MaxLateness} %v (%d of %d requests later than the threshold)",
			ErrLatenessBudget, s.Lateness.P99, s.MaxLateness, s.Late, s.Dispatched)
	}
	return nil
}

// Percentiles summarises a distribution of durations. Percentiles come
// from a log-linear histogram with 64 sub-buckets per power of two
// (relative error ≤ 1/64); Max and Mean are exact.
type Percentiles struct {
	Count              int64
	P50, P90, P99, Max time.Duration
	Mean               time.Duration
}

// Histogram layout: values below 64 ns have a bucket each; above, each
// power of two [2^e, 2^(e+1)) is split into 64 equal sub-buckets.
const (
	subBits     = 6
	histBuckets = (64 - subBits + 1) << subBits // enough for every uint64
)

func bucketOf(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	n := bits.Len64(v)         // ≥ 7
	shift := n - subBits - 1   // keep the top 7 bits
	m := int(v >> uint(shift)) // in [64, 128)
	return (shift+1)<<subBits + m - 1<<subBits
}

// bucketHigh is the largest value of bucket b.
func bucketHigh(b int) uint64 {
	if b < 1<<subBits {
		return uint64(b)
	}
	shift := b>>subBits - 1
	m := uint64(b&(1<<subBits-1) + 1<<subBits)
	return (m+1)<<uint(shift) - 1
}

// collector accumulates Stats lock-free from the dispatcher and senders.
type collector struct {
	hist        []atomic.Uint64
	count       atomic.Int64
	sum         atomic.Int64
	max         atomic.Int64
	warmup      atomic.Int64
	completed   atomic.Int64
	late        atomic.Int64
	waited      atomic.Int64
	shifted     atomic.Int64
	skipped     atomic.Int64
	sdTotal     atomic.Int64
	sdMax       atomic.Int64
	firstIntent atomic.Int64
	lastIntent  atomic.Int64
	firstDisp   atomic.Int64
	lastDisp    atomic.Int64
	threshold   int64
}

func newCollector(threshold time.Duration) *collector {
	c := &collector{hist: make([]atomic.Uint64, histBuckets), threshold: int64(threshold)}
	c.firstIntent.Store(math.MaxInt64)
	c.firstDisp.Store(math.MaxInt64)
	c.lastIntent.Store(math.MinInt64)
	c.lastDisp.Store(math.MinInt64)
	return c
}

func storeMax(a *atomic.Int64, v int64) {
	for o := a.Load(); v > o && !a.CompareAndSwap(o, v); o = a.Load() {
	}
}

func storeMin(a *atomic.Int64, v int64) {
	for o := a.Load(); v < o && !a.CompareAndSwap(o, v); o = a.Load() {
	}
}

// record accounts one dispatched job (Late must already be set).
func (c *collector) record(j *Job) {
	if j.Phase == record.PhaseWarmup {
		c.warmup.Add(1)
		return
	}
	l := j.DispatchedNS - j.IntendedNS
	if l < 0 {
		l = 0
	}
	c.hist[bucketOf(uint64(l))].Add(1)
	c.count.Add(1)
	c.sum.Add(l)
	storeMax(&c.max, l)
	if j.Late {
		c.late.Add(1)
	}
	if j.Waited {
		c.waited.Add(1)
	}
	if j.ShiftNS > 0 {
		c.shifted.Add(1)
	}
	if j.SessionDelayNS > 0 {
		c.sdTotal.Add(j.SessionDelayNS)
		storeMax(&c.sdMax, j.SessionDelayNS)
	}
	storeMin(&c.firstIntent, j.IntendedNS)
	storeMax(&c.lastIntent, j.IntendedNS)
	storeMin(&c.firstDisp, j.DispatchedNS)
	storeMax(&c.lastDisp, j.DispatchedNS)
}

// percentile returns the smallest bucket bound with at least q of the
// samples at or below it, capped at the exact maximum.
func (c *collector) percentile(q float64) time.Duration {
	n := c.count.Load()
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for b := range c.hist {
		seen += int64(c.hist[b].Load())
		if seen >= rank {
			return time.Duration(min(int64(bucketHigh(b)), c.max.Load()))
		}
	}
	return time.Duration(c.max.Load())
}

func (c *collector) lateness() Percentiles {
	n := c.count.Load()
	p := Percentiles{Count: n}
	if n == 0 {
		return p
	}
	p.P50, p.P90, p.P99 = c.percentile(0.50), c.percentile(0.90), c.percentile(0.99)
	p.Max = time.Duration(c.max.Load())
	p.Mean = time.Duration(c.sum.Load() / n)
	return p
}

func rate(n int64, first, last int64) float64 {
	if n < 2 || last <= first {
		return 0
	}
	return float64(n-1) / (float64(last-first) / 1e9)
}
