package replay

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Defaults of [NewConfig].
const (
	// DefaultSpeedup replays trace time as is.
	DefaultSpeedup = 1.0
	// DefaultArrival is the inter-arrival pattern of [ModeRate].
	DefaultArrival = ArrivalPoisson
	// DefaultSmoothness is the gamma shape: 1 is Poisson.
	DefaultSmoothness = 1.0
	// DefaultGrace is how long in-flight requests may finish after Duration.
	DefaultGrace = 30 * time.Second
	// DefaultLate is the behind-schedule policy.
	DefaultLate = LateBurst
	// DefaultLateThreshold is the lateness above which a request counts as
	// late (and, with LateShift or LateSkip, moves the schedule or is dropped).
	DefaultLateThreshold = time.Millisecond
	// DefaultSenders is the number of long-lived sender goroutines when
	// neither Senders nor Concurrency is set (see
	// [Config.SendersOrDefault]). It bounds the requests in
	// flight: a request due while all senders are busy is late.
	DefaultSenders = 1024
	// DefaultRequestCount applies to a synthetic load (no trace) given no
	// stop condition, as in AIPerf.
	DefaultRequestCount = 10
	// DefaultSeed seeds the arrival generators.
	DefaultSeed = 1
	// DefaultDependencies is the timing policy of dependent requests.
	DefaultDependencies = DepsOpen
)

// DepPolicy is the timing policy of a trace's dependent requests
// (trace.Row.WaitFor; design 0008). Roots (rows that wait for nothing)
// are due at their timestamps under every policy.
type DepPolicy string

// The dependency timing policies.
const (
	// DepsOpen sends a dependent row at the later of its own timestamp
	// (when it has one) and its dependencies' completion plus its delay
	// and tool time: the recorded timeline, but dependencies win. The
	// part of the wait caused by the dependencies is [Job.SessionDelayNS],
	// not lateness.
	DepsOpen DepPolicy = "open"
	// DepsClosed sends a dependent row its delay and tool time after its
	// last dependency completed, ignoring its own timestamp.
	DepsClosed DepPolicy = "closed"
	// DepsStrict sends every row at its timestamp and ignores the
	// dependencies; every row needs a timestamp. Faithful only for
	// self-contained prompts.
	DepsStrict DepPolicy = "strict"
)

// Mode is the timing mode. The zero value [ModeAuto] picks one from the
// trace and the flags (see [Config.Mode]).
type Mode string

// The timing modes.
const (
	ModeAuto        Mode = ""
	ModeFixed       Mode = "fixed"        // trace timestamps (fixed schedule)
	ModeRate        Mode = "rate"         // RequestRate, open loop
	ModeConcurrency Mode = "concurrency"  // Concurrency, closed loop
	ModeUserCentric Mode = "user-centric" // UserCentricRate with NumUsers
)

// Arrival is the inter-arrival pattern of [ModeRate].
type Arrival string

// The arrival patterns.
const (
	ArrivalConstant Arrival = "constant" // every 1/R
	ArrivalPoisson  Arrival = "poisson"  // exponential gaps, mean 1/R
	ArrivalGamma    Arrival = "gamma"    // Gamma(shape S, scale 1/(R·S)) gaps
)

// LatePolicy says what happens to a request that is due while the
// dispatcher is behind by more than [Config.LateThreshold].
type LatePolicy string

// The behind-schedule policies.
const (
	// LateBurst fires late requests at once and records their lateness.
	LateBurst LatePolicy = "burst"
	// LateShift fires the late request and moves the rest of the schedule
	// back by its lateness, keeping the gaps.
	LateShift LatePolicy = "shift"
	// LateSkip drops the late request (and the rest of its session) and
	// counts it; the engine records it as skipped.
	LateSkip LatePolicy = "skip"
)

// Config is the complete timing configuration of one run. The reprise
// command sets each field from the flag of the same name in kebab case
// (MaxLateness from max-lateness). Build it with [NewConfig]; the zero
// value is not valid (Speedup 0). Validate never changes it.
type Config struct {
	// Mode selects the timing mode. ModeAuto picks, first match wins: fixed
	// schedule when a trace row has a timestamp; user-centric when
	// UserCentricRate > 0; rate when RequestRate > 0; concurrency when
	// Concurrency > 0.
	Mode Mode

	// AutoOffset (default true) makes the first kept trace timestamp time zero
	// of the run. Without it time zero is StartOffset (0 unless set), so a
	// trace starting at minute 40 first idles 40 minutes (divided by Speedup).
	AutoOffset bool
	// StartOffset and EndOffset keep only rows with StartOffset ≤ timestamp ≤
	// EndOffset (inclusive, trace time); EndOffset 0 means no end. Rows
	// without a timestamp are kept.
	StartOffset time.Duration
	EndOffset   time.Duration
	// Speedup divides trace time: 2 replays twice as fast, 0.5 half as fast.
	// Applies to timestamps and to turn delays.
	Speedup float64

	// RequestRate is the target rate in requests per second (every turn
	// counts) of ModeRate.
	RequestRate float64
	// Arrival is the inter-arrival pattern of ModeRate.
	Arrival Arrival
	// Smoothness is the gamma shape: 1 Poisson, < 1 burstier, > 1 smoother.
	// Only with ArrivalGamma.
	Smoothness float64
	// Concurrency is the number of sessions in flight: the closed-loop level
	// of ModeConcurrency, or a cap in the other modes (a request waiting for a
	// slot is late and says so). 0 = no cap.
	Concurrency int
	// RateRamp ramps the rate linearly from 0 to RequestRate over this
	// duration. 0 = no ramp.
	RateRamp time.Duration
	// RateSeries, when it has points, is the rate of ModeRate instead of
	// RequestRate (AIPerf's --request-rate-series): the first point's
	// rate until its time, linear between points, the last point's after
	// it ([RateAt]), times from the run's start; the arrival pattern is
	// Arrival's, time-changed to that rate. It excludes RequestRate and
	// RateRamp (put the ramp in the series). See [ParseRateSeries].
	RateSeries []RatePoint
	// ConcurrencyRamp raises the closed-loop level from 1 to Concurrency in +1
	// steps evenly spaced over this duration.
	ConcurrencyRamp time.Duration
	// Adaptive, when not nil, lets a controller move the closed-loop
	// level during the run, Concurrency being its ceiling (see
	// [Adaptive]).
	Adaptive *Adaptive
	// Watch, when not nil, may stop the run at the end of each of its
	// periods (see [Watch]).
	Watch *Watch
	// IgnoreTurnDelays sends a session's next turn (or a dependent row)
	// as soon as the turn before completed, without the trace's delay
	// (AIPerf's --ignore-trace-delays); MaxTurnDelay, when > 0, caps each
	// such delay (after Speedup; AIPerf's --inter-turn-delay-cap-seconds).
	// A row's own timestamp in the fixed schedule still holds.
	IgnoreTurnDelays bool
	MaxTurnDelay     time.Duration
	// PrefillConcurrency caps the requests waiting for their first token
	// (AIPerf's --prefill-concurrency): a request is sent once fewer than
	// this many sent requests have had no first token yet, and its slot
	// is freed when the [Handler] reports the first token
	// ([Job.FirstToken]; a non-streamed response has its first token at
	// its end). It holds its session slot meanwhile, and the wait is
	// part of the time between its dispatch and its send. 0 = no cap.
	// PrefillConcurrencyRamp raises the cap from 1 in even steps over
	// this duration, as ConcurrencyRamp does.
	PrefillConcurrency     int
	PrefillConcurrencyRamp time.Duration
	// UserCentricRate is the total turn rate of ModeUserCentric, shared by
	// NumUsers users, each sending one turn every NumUsers/UserCentricRate
	// seconds.
	UserCentricRate float64
	NumUsers        int

	// RequestCount stops after this many measured requests (every turn counts;
	// warmup excluded). 0 = no limit (end of trace; DefaultRequestCount for a
	// synthetic load without Duration).
	RequestCount int
	// Duration stops issuing requests this long after the measured phase
	// began; in-flight requests then get Grace to finish before their context
	// is cancelled. 0 = no limit.
	Duration time.Duration
	Grace    time.Duration
	// WarmupRequests marks the first N requests as warmup; WarmupDuration
	// marks those due in the first D of the run. Warmup jobs carry
	// record.PhaseWarmup and are excluded from [Stats] and from RequestCount
	// and Duration.
	WarmupRequests int
	WarmupDuration time.Duration

	// Late is the behind-schedule policy; LateThreshold the lateness above
	// which a request is late.
	Late          LatePolicy
	LateThreshold time.Duration
	// Seed seeds every random draw; equal seeds give equal schedules.
	Seed uint64
	// MaxLateness is a budget for the p99 lateness of the measured requests;
	// exceeding it sets [Stats.LatenessBudgetExceeded]. 0 = no budget.
	MaxLateness time.Duration
	// Senders is the number of long-lived sender goroutines; 0 leaves it to
	// [Config.SendersOrDefault].
	Senders int
	// Dependencies is the timing policy of a trace's dependent requests
	// (rows with trace.Row.WaitFor). It changes nothing for a trace
	// without them.
	Dependencies DepPolicy

	// Shard makes the run one part of a workload split over several
	// processes (see [Shard]); the zero value runs all of it.
	Shard Shard
	// StartAt, when not zero, is the wall-clock instant of the run's time
	// zero: the run waits for it (on the run's [Clock]), so processes
	// given the same StartAt share one timeline. An instant already past
	// anchors the schedule there all the same: what fell due meanwhile is
	// late, and the lateness says so.
	StartAt time.Time
}

// SendersOrDefault returns the number of long-lived sender goroutines a
// run of c starts, the most requests it has in flight: Senders when set,
// else Concurrency when set (a closed loop needs no more), else
// [DefaultSenders]. It is the only place that rule lives.
func (c *Config) SendersOrDefault() int {
	switch {
	case c.Senders > 0:
		return c.Senders
	case c.Concurrency > 0:
		return c.Concurrency
	}
	return DefaultSenders
}

// NewConfig returns a Config with the documented defaults: auto-offset on,
// speedup 1, Poisson arrivals with smoothness 1, grace 30 s, late policy
// burst with a 1 ms threshold, seed 1, dependencies open.
func NewConfig() Config {
	return Config{
		AutoOffset:    true,
		Speedup:       DefaultSpeedup,
		Arrival:       DefaultArrival,
		Smoothness:    DefaultSmoothness,
		Grace:         DefaultGrace,
		Late:          DefaultLate,
		LateThreshold: DefaultLateThreshold,
		Seed:          DefaultSeed,
		Dependencies:  DefaultDependencies,
	}
}

// Validate reports every problem of c on its own, each a [*FieldError],
// joined with errors.Join; it does not look at a trace (see
// [Config.ModeFor]).
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, fieldError(field, format, args...)) }
	switch c.Mode {
	case ModeAuto, ModeFixed, ModeRate, ModeConcurrency, ModeUserCentric:
	default:
		bad("Mode", "{Mode} %q: want fixed, rate, concurrency or user-centric", c.Mode)
	}
	switch c.Arrival {
	case ArrivalConstant, ArrivalPoisson, ArrivalGamma:
	default:
		bad("Arrival", "{Arrival} %q: want constant, poisson or gamma", c.Arrival)
	}
	switch c.Late {
	case LateBurst, LateShift, LateSkip:
	default:
		bad("Late", "{Late} %q: want burst, shift or skip", c.Late)
	}
	switch c.Dependencies {
	case "", DepsOpen, DepsClosed, DepsStrict:
	default:
		bad("Dependencies", "{Dependencies} %q: want open, closed or strict", c.Dependencies)
	}
	finitePos := func(field string, v float64, zeroOK bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (v == 0 && !zeroOK) {
			if zeroOK {
				bad(field, "{"+field+"} %v: want a finite number ≥ 0", v)
			} else {
				bad(field, "{"+field+"} %v: want a finite number > 0", v)
			}
		}
	}
	finitePos("Speedup", c.Speedup, false)
	finitePos("RequestRate", c.RequestRate, true)
	finitePos("Smoothness", c.Smoothness, false)
	finitePos("UserCentricRate", c.UserCentricRate, true)
	nonNeg := func(field string, d time.Duration) {
		if d < 0 {
			bad(field, "{"+field+"} %v: want a duration ≥ 0", d)
		}
	}
	nonNeg("StartOffset", c.StartOffset)
	nonNeg("EndOffset", c.EndOffset)
	nonNeg("RateRamp", c.RateRamp)
	nonNeg("ConcurrencyRamp", c.ConcurrencyRamp)
	nonNeg("PrefillConcurrencyRamp", c.PrefillConcurrencyRamp)
	nonNeg("MaxTurnDelay", c.MaxTurnDelay)
	nonNeg("Duration", c.Duration)
	nonNeg("Grace", c.Grace)
	nonNeg("WarmupDuration", c.WarmupDuration)
	nonNeg("LateThreshold", c.LateThreshold)
	nonNeg("MaxLateness", c.MaxLateness)
	nonNegInt := func(field string, n int) {
		if n < 0 {
			bad(field, "{"+field+"} %d: want a number ≥ 0", n)
		}
	}
	nonNegInt("Concurrency", c.Concurrency)
	nonNegInt("NumUsers", c.NumUsers)
	nonNegInt("RequestCount", c.RequestCount)
	nonNegInt("WarmupRequests", c.WarmupRequests)
	nonNegInt("Senders", c.Senders)
	nonNegInt("PrefillConcurrency", c.PrefillConcurrency)

	c.validateSeries(bad)
	c.validateShard(bad)
	if c.EndOffset > 0 && c.EndOffset < c.StartOffset {
		bad("EndOffset", "{EndOffset} %v is before {StartOffset} %v", c.EndOffset, c.StartOffset)
	}
	if c.Smoothness != DefaultSmoothness && c.Arrival != ArrivalGamma {
		bad("Smoothness", "{Smoothness} %v needs {Arrival} gamma (it is the gamma shape)", c.Smoothness)
	}
	if c.WarmupRequests > 0 && c.WarmupDuration > 0 {
		bad("WarmupRequests", "{WarmupRequests} and {WarmupDuration} are mutually exclusive")
	}
	if c.UserCentricRate > 0 && c.NumUsers == 0 {
		bad("NumUsers", "{UserCentricRate} needs {NumUsers}")
	}
	if c.NumUsers > 0 && c.UserCentricRate == 0 {
		bad("UserCentricRate", "{NumUsers} needs {UserCentricRate}")
	}
	if c.UserCentricRate > 0 && c.RequestRate > 0 {
		bad("RequestRate", "{UserCentricRate} and {RequestRate} are mutually exclusive")
	}
	if c.ConcurrencyRamp > 0 && c.Concurrency < 2 {
		bad("ConcurrencyRamp", "{ConcurrencyRamp} needs {Concurrency} ≥ 2")
	}
	if c.Adaptive != nil {
		c.Adaptive.validate(c, bad)
	}
	if w := c.Watch; w != nil && (w.Check == nil || w.Period <= 0) {
		bad("Watch", "{Watch} needs a Check function and a period > 0")
	}
	if c.PrefillConcurrencyRamp > 0 && c.PrefillConcurrency < 2 {
		bad("PrefillConcurrencyRamp", "{PrefillConcurrencyRamp} needs {PrefillConcurrency} ≥ 2")
	}
	if c.PrefillConcurrency > 0 && c.Concurrency > 0 && c.PrefillConcurrency > c.Concurrency {
		bad("PrefillConcurrency", "{PrefillConcurrency} %d exceeds {Concurrency} %d: it could never bind", c.PrefillConcurrency, c.Concurrency)
	}
	if c.Senders > 0 && c.Concurrency > c.Senders {
		bad("Senders", "{Concurrency} %d exceeds {Senders} %d: the extra sessions could never run", c.Concurrency, c.Senders)
	}
	c.validateModeFields(bad)
	return errors.Join(errs...)
}

// validateModeFields reports the fields set for another mode than
// c.Mode (nothing under ModeAuto: ModeFor checks those) and what c.Mode
// needs.
func (c *Config) validateModeFields(bad func(field, format string, args ...any)) {
	m := c.Mode
	if m != ModeAuto {
		if m != ModeFixed {
			if c.Speedup != DefaultSpeedup {
				bad("Speedup", "{Speedup} needs the fixed schedule ({Mode} fixed)")
			}
			if c.StartOffset != 0 || c.EndOffset != 0 {
				bad("StartOffset", "{StartOffset}/{EndOffset} need the fixed schedule ({Mode} fixed)")
			}
		}
		if m != ModeRate {
			if c.RequestRate > 0 {
				bad("RequestRate", "{RequestRate} needs {Mode} rate, not %s", m)
			}
			if c.RateRamp > 0 {
				bad("RateRamp", "{RateRamp} needs {Mode} rate, not %s", m)
			}
			if len(c.RateSeries) > 0 {
				bad("RateSeries", "{RateSeries} needs {Mode} rate, not %s", m)
			}
		}
		if m != ModeRate && (c.Arrival != DefaultArrival || c.Smoothness != DefaultSmoothness) {
			bad("Arrival", "{Arrival}/{Smoothness} need {Mode} rate, not %s", m)
		}
		if m != ModeConcurrency && c.ConcurrencyRamp > 0 {
			bad("ConcurrencyRamp", "{ConcurrencyRamp} needs {Mode} concurrency, not %s", m)
		}
		if m != ModeUserCentric && c.UserCentricRate > 0 {
			bad("UserCentricRate", "{UserCentricRate} needs {Mode} user-centric, not %s", m)
		}
		switch m {
		case ModeRate:
			if c.RequestRate == 0 && len(c.RateSeries) == 0 {
				bad("RequestRate", "{Mode} rate needs {RequestRate}")
			}
		case ModeConcurrency:
			if c.Concurrency == 0 {
				bad("Concurrency", "{Mode} concurrency needs {Concurrency}")
			}
		case ModeUserCentric:
			if c.UserCentricRate == 0 {
				bad("UserCentricRate", "{Mode} user-centric needs {UserCentricRate} and {NumUsers}")
			}
		}
	}
}

// validateSeries reports the problems of c.RateSeries.
func (c *Config) validateSeries(bad func(field, format string, args ...any)) {
	if len(c.RateSeries) == 0 {
		return
	}
	if err := checkRateSeries(c.RateSeries); err != nil {
		bad("RateSeries", "{RateSeries}: %w", err)
	}
	if c.RequestRate > 0 {
		bad("RateSeries", "{RateSeries} and {RequestRate} are mutually exclusive (as in AIPerf)")
	}
	if c.RateRamp > 0 {
		bad("RateSeries", "{RateSeries} and {RateRamp} are mutually exclusive; start the series at a low rate instead")
	}
	if c.UserCentricRate > 0 {
		bad("RateSeries", "{RateSeries} and {UserCentricRate} are mutually exclusive (as in AIPerf)")
	}
}

// ModeFor resolves ModeAuto for a run over a trace (traceRows) or a
// synthetic load and checks the mode against the trace and the other
// fields, reporting every problem at once, each a [*FieldError].
// hasTimestamps tells whether any trace row has a timestamp.
func (c *Config) ModeFor(traceRows bool, hasTimestamps bool) (Mode, error) {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, fieldError(field, format, args...)) }
	m := c.Mode
	if m == ModeAuto && c.Adaptive != nil {
		m = ModeConcurrency // AIPerf: --adaptive-scale selects the closed loop
	}
	if m == ModeAuto {
		switch {
		case traceRows && hasTimestamps:
			m = ModeFixed
			var conflicting []string
			if c.RequestRate > 0 {
				conflicting = append(conflicting, "{RequestRate}")
			}
			if c.UserCentricRate > 0 {
				conflicting = append(conflicting, "{UserCentricRate}")
			}
			if c.NumUsers > 0 {
				conflicting = append(conflicting, "{NumUsers}")
			}
			if c.RateRamp > 0 {
				conflicting = append(conflicting, "{RateRamp}")
			}
			if len(c.RateSeries) > 0 {
				conflicting = append(conflicting, "{RateSeries}")
			}
			if c.Arrival != DefaultArrival || c.Smoothness != DefaultSmoothness {
				conflicting = append(conflicting, "{Arrival}/{Smoothness}")
			}
			if c.ConcurrencyRamp > 0 {
				conflicting = append(conflicting, "{ConcurrencyRamp}")
			}
			if len(conflicting) > 0 {
				verb := "conflicts"
				if len(conflicting) > 1 {
					verb = "conflict"
				}
				bad("Mode", strings.Join(conflicting, ", ")+" "+verb+
					" with the trace's timestamps (fixed schedule); add {Mode} rate, concurrency or user-centric to ignore them")
			}
		case c.UserCentricRate > 0:
			m = ModeUserCentric
		case c.RequestRate > 0 || len(c.RateSeries) > 0:
			m = ModeRate
		case c.Concurrency > 0:
			m = ModeConcurrency
		default:
			if traceRows {
				bad("Mode", "the trace has no timestamps: give {RequestRate}, {Concurrency} or {UserCentricRate}")
			} else {
				bad("Mode", "no load model: give {RequestRate}, {Concurrency} or {UserCentricRate} (or a trace)")
			}
		}
		if m != ModeFixed && m != ModeAuto {
			if c.Speedup != DefaultSpeedup {
				bad("Speedup", "{Speedup} needs the fixed schedule (a trace with timestamps)")
			}
			if c.StartOffset != 0 || c.EndOffset != 0 {
				bad("StartOffset", "{StartOffset}/{EndOffset} need the fixed schedule (a trace with timestamps)")
			}
		}
		if m == ModeRate && c.ConcurrencyRamp > 0 {
			bad("ConcurrencyRamp", "{ConcurrencyRamp} needs {Mode} concurrency")
		}
	}
	switch m {
	case ModeFixed:
		if !traceRows {
			bad("Mode", "the fixed schedule needs a trace")
		} else if !hasTimestamps {
			bad("Mode", "the fixed schedule needs a trace with timestamps")
		}
	case ModeUserCentric:
		if !traceRows {
			bad("UserCentricRate", "{UserCentricRate} needs a trace with multi-turn sessions")
		}
	}
	return m, errors.Join(errs...)
}

// turnDelay is a trace delay of d ns (scaled) as the run waits it:
// 0 with IgnoreTurnDelays, at most MaxTurnDelay when that is set.
func (c *Config) turnDelay(d int64) int64 {
	switch {
	case c.IgnoreTurnDelays:
		return 0
	case c.MaxTurnDelay > 0:
		return min(d, int64(c.MaxTurnDelay))
	}
	return d
}

// Adaptive lets a controller change the closed-loop level of
// [ModeConcurrency] while the run goes (adaptive scaling, AIPerf's
// --adaptive-scale; docs/design/0032-adaptive-scale.md). The run starts
// Start sessions; every Period from time zero Assess is called, from a
// goroutine of its own (never the dispatcher's), and the level it
// returns applies from then on, clamped to [1, Concurrency]:
//
//   - a higher level starts the extra sessions at once (the dispatcher
//     sees it within its poll interval, as a ramp step);
//   - a lower level ends sessions as they end: a session that completes
//     while more sessions run than the level is not replaced, so no
//     request is sent while the sessions in flight are at the level or
//     above it.
//
// Assess returning stop ends the run as its Duration would. Concurrency
// is the ceiling (the senders are started for it).
type Adaptive struct {
	Start  int
	Period time.Duration
	// Assess gets the reading of the run's clock (the time base of
	// [Job.DispatchedNS]).
	Assess func(nowNS int64) (level int, stop bool)
}

// Watch is a stop condition of any mode (the stability stop, GenAI-Perf's
// --stability-percentage): every Period from time zero Check is called,
// from a goroutine of its own, and its stop ends the run as its Duration
// would, reason being the run's stop reason.
type Watch struct {
	Period time.Duration
	// Check gets the reading of the run's clock (the time base of
	// [Job.DispatchedNS]).
	Check func(nowNS int64) (stop bool, reason string)
}

// validate checks a's fields against c; bad reports a problem.
func (a *Adaptive) validate(c *Config, bad func(field, format string, args ...any)) {
	if a.Assess == nil {
		bad("Adaptive", "{Adaptive} needs an Assess function")
	}
	if a.Period <= 0 {
		bad("Adaptive", "{Adaptive} period %v: want > 0", a.Period)
	}
	if a.Start < 1 || a.Start > c.Concurrency {
		bad("Adaptive", "{Adaptive} start %d: want 1 … {Concurrency} (%d)", a.Start, c.Concurrency)
	}
	if c.ConcurrencyRamp > 0 {
		bad("Adaptive", "{Adaptive} and {ConcurrencyRamp} both move the level: use one")
	}
	if c.Mode != ModeAuto && c.Mode != ModeConcurrency {
		bad("Adaptive", "{Adaptive} needs {Mode} concurrency, not %s", c.Mode)
	}
}

// RatePoint is one control point of a request-rate series
// ([Config.RateSeries]): the rate QPS, in requests per second, At this
// time after the run's start.
type RatePoint struct {
	At  time.Duration
	QPS float64
}

// checkRateSeries checks the points of a series: at least two, times
// strictly increasing from ≥ 0, rates finite and > 0.
func checkRateSeries(pts []RatePoint) error {
	if len(pts) < 2 {
		return errors.New("a request-rate series needs at least two points")
	}
	for i, p := range pts {
		if p.At < 0 {
			return fmt.Errorf("point %d: time %v: want ≥ 0", i, p.At)
		}
		if !(p.QPS > 0) || math.IsInf(p.QPS, 0) {
			return fmt.Errorf("point %d: qps %v: want a finite rate > 0", i, p.QPS)
		}
		if i > 0 && p.At <= pts[i-1].At {
			return fmt.Errorf("point %d: time %v is not after point %d's %v: times must be strictly increasing", i, p.At, i-1, pts[i-1].At)
		}
	}
	return nil
}

// Shard names one part of a workload split over Count processes, which
// together send what one process would: [Config.Shard]. The zero value
// (and any Count ≤ 1) is the whole workload.
//
// A trace is split by session: every session goes whole to one shard, so
// a multi-turn history never crosses processes. The sessions are taken in
// start order (the fixed schedule's send time of their first turn, else
// trace order) and each goes to the shard with the fewest requests so far,
// the lowest index on a tie. At every point of the schedule the requests
// of the sessions each shard has started then differ by at most the turns
// of one session: load is balanced over time, not only in total. Every shard computes the same
// assignment from the same trace and Config, with no coordination.
//
// Rows keep their index (the records' trace_row, the seed of their
// prompt) and the fixed schedule its time zero (the earliest first turn
// of the whole trace), so a row's request body and send time are the same
// whichever shard sends it, and the prefixes shared between sessions on
// different shards are the trace's. A synthetic load's k-th request of
// shard i is request k·Count+i of the unsharded run.
//
// The load parameters are divided ([Config.Share]): RequestRate,
// Concurrency, NumUsers (with UserCentricRate in proportion, so each
// user's turn gap stays NumUsers/UserCentricRate), RequestCount and
// WarmupRequests. Durations, Senders and the lateness budget are per
// process.
type Shard struct {
	// Index is this process's shard, 0 ≤ Index < Count.
	Index int
	// Count is the number of shards; 0 or 1 is the whole workload.
	Count int
}

// Sharded reports whether s is one part of several.
func (s Shard) Sharded() bool { return s.Count > 1 }

// String returns s as "Index/Count", or "" for the whole workload.
func (s Shard) String() string {
	if !s.Sharded() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// MaxShardCount is the most shards a workload is split into: more
// processes than a Kubernetes Indexed Job runs (10^5 completions), and a
// bound for what reads a shard's count back (reprise merge).
const MaxShardCount = 100_000

// ParseShard parses "i/N" (0 ≤ i < N, 1 ≤ N ≤ [MaxShardCount]).
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/4", s)
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	switch {
	case err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT with whole numbers, e.g. 0/4", s)
	case n < 1:
		return Shard{}, fmt.Errorf("shard %q: the count must be at least 1", s)
	case n > MaxShardCount:
		return Shard{}, fmt.Errorf("shard %q: the count must be at most %d", s, MaxShardCount)
	case i < 0 || i >= n:
		return Shard{}, fmt.Errorf("shard %q: the index must be 0 to %d", s, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// validateShard reports the problems of c.Shard and of the share each
// shard would get.
func (c *Config) validateShard(bad func(field, format string, args ...any)) {
	s := c.Shard
	if s.Count < 0 || (s.Count > 0 && (s.Index < 0 || s.Index >= s.Count)) || (s.Count == 0 && s.Index != 0) {
		bad("Shard", "{Shard} %d/%d: want INDEX/COUNT with 0 ≤ INDEX < COUNT", s.Index, s.Count)
		return
	}
	if s.Count > MaxShardCount {
		bad("Shard", "{Shard} %d/%d: want COUNT ≤ %d", s.Index, s.Count, MaxShardCount)
		return
	}
	if !s.Sharded() {
		return
	}
	few := func(field string, n int, what string) {
		if n > 0 && n < s.Count {
			bad(field, "{"+field+"} %d is less than the %d shards of {Shard}: a shard would get no %s", n, s.Count, what)
		}
	}
	few("Concurrency", c.Concurrency, "session slot")
	few("NumUsers", c.NumUsers, "user")
	few("RequestCount", c.RequestCount, "request")
	if c.ConcurrencyRamp > 0 && c.Concurrency < 2*s.Count {
		bad("ConcurrencyRamp", "{ConcurrencyRamp} needs {Concurrency} ≥ 2 per shard (%d for %d shards)", 2*s.Count, s.Count)
	}
}
