package replay

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Defaults of [NewConfig].
const (
	// DefaultSpeedup replays trace time as is.
	DefaultSpeedup = 1.0
	// DefaultArrival is the inter-arrival pattern of --request-rate.
	DefaultArrival = ArrivalPoisson
	// DefaultSmoothness is the gamma shape: 1 is Poisson.
	DefaultSmoothness = 1.0
	// DefaultGrace is how long in-flight requests may finish after --duration.
	DefaultGrace = 30 * time.Second
	// DefaultLate is the behind-schedule policy.
	DefaultLate = LateBurst
	// DefaultLateThreshold is the lateness above which a request counts as
	// late (and, with --late shift|skip, moves the schedule or is dropped).
	DefaultLateThreshold = time.Millisecond
	// DefaultSenders is the number of long-lived sender goroutines when
	// neither --senders nor --concurrency is set. It bounds the requests in
	// flight: a request due while all senders are busy is late.
	DefaultSenders = 1024
	// DefaultRequestCount applies to a synthetic load (no trace) given no
	// stop condition, as in AIPerf.
	DefaultRequestCount = 10
	// DefaultSeed seeds the arrival generators.
	DefaultSeed = 1
)

// Mode is the timing mode. The zero value [ModeAuto] picks one from the
// trace and the flags (see [Config.Mode]).
type Mode string

// The timing modes.
const (
	ModeAuto        Mode = ""
	ModeFixed       Mode = "fixed"        // trace timestamps (fixed schedule)
	ModeRate        Mode = "rate"         // --request-rate open loop
	ModeConcurrency Mode = "concurrency"  // --concurrency closed loop
	ModeUserCentric Mode = "user-centric" // --user-centric-rate with --num-users
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

// Config is the complete timing configuration of one run. Each field maps
// 1:1 to the CLI flag named in its comment (see [CLIFlags]). Build it with
// [NewConfig]; the zero value is not valid (Speedup 0). Validate never
// changes it.
type Config struct {
	// Mode (--mode) selects the timing mode. ModeAuto picks, first match
	// wins: fixed schedule when a trace row has a timestamp; user-centric
	// when UserCentricRate > 0; rate when RequestRate > 0; concurrency
	// when Concurrency > 0.
	Mode Mode

	// AutoOffset (--auto-offset, default true; --no-auto-offset) makes the
	// first kept trace timestamp time zero of the run. Without it time
	// zero is StartOffset (0 unless set), so a trace starting at minute 40
	// first idles 40 minutes (divided by Speedup).
	AutoOffset bool
	// StartOffset and EndOffset (--start-offset, --end-offset) keep only
	// rows with StartOffset ≤ timestamp ≤ EndOffset (inclusive, trace
	// time); EndOffset 0 means no end. Rows without a timestamp are kept.
	StartOffset time.Duration
	EndOffset   time.Duration
	// Speedup (--speedup) divides trace time: 2 replays twice as fast, 0.5
	// half as fast. Applies to timestamps and to turn delays.
	Speedup float64

	// RequestRate (--request-rate) is the target rate in requests per
	// second (every turn counts) of ModeRate.
	RequestRate float64
	// Arrival (--arrival) is the inter-arrival pattern of ModeRate.
	Arrival Arrival
	// Smoothness (--smoothness) is the gamma shape: 1 Poisson, < 1
	// burstier, > 1 smoother. Only with ArrivalGamma.
	Smoothness float64
	// Concurrency (--concurrency) is the number of sessions in flight: the
	// closed-loop level of ModeConcurrency, or a cap in the other modes
	// (a request waiting for a slot is late and says so). 0 = no cap.
	Concurrency int
	// RateRamp (--rate-ramp) ramps the rate linearly from 0 to RequestRate
	// over this duration. 0 = no ramp.
	RateRamp time.Duration
	// ConcurrencyRamp (--concurrency-ramp) raises the closed-loop level
	// from 1 to Concurrency in +1 steps evenly spaced over this duration.
	ConcurrencyRamp time.Duration
	// UserCentricRate (--user-centric-rate) is the total turn rate of
	// ModeUserCentric, shared by NumUsers (--num-users) users, each
	// sending one turn every NumUsers/UserCentricRate seconds.
	UserCentricRate float64
	NumUsers        int

	// RequestCount (--request-count) stops after this many measured
	// requests (every turn counts; warmup excluded). 0 = no limit (end of
	// trace; DefaultRequestCount for a synthetic load without Duration).
	RequestCount int
	// Duration (--duration) stops issuing requests this long after the
	// measured phase began; in-flight requests then get Grace (--grace)
	// to finish before their context is cancelled. 0 = no limit.
	Duration time.Duration
	Grace    time.Duration
	// WarmupRequests (--warmup-requests) marks the first N requests as
	// warmup; WarmupDuration (--warmup-duration) marks those due in the
	// first D of the run. Warmup jobs carry record.PhaseWarmup and are
	// excluded from [Stats] and from RequestCount and Duration.
	WarmupRequests int
	WarmupDuration time.Duration

	// Late (--late) is the behind-schedule policy; LateThreshold
	// (--late-threshold) the lateness above which a request is late.
	Late          LatePolicy
	LateThreshold time.Duration
	// Seed (--seed) seeds every random draw; equal seeds give equal
	// schedules.
	Seed uint64
	// MaxLateness (--max-lateness) is a budget for the p99 lateness of the
	// measured requests; exceeding it sets [Stats.LatenessBudgetExceeded].
	// 0 = no budget.
	MaxLateness time.Duration
	// Senders (--senders) is the number of long-lived sender goroutines.
	// 0 = Concurrency when set, else DefaultSenders.
	Senders int
}

// NewConfig returns a Config with the documented defaults: auto-offset on,
// speedup 1, Poisson arrivals with smoothness 1, grace 30 s, late policy
// burst with a 1 ms threshold, seed 1.
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
	}
}

// Validate reports every problem of c on its own, joined with
// errors.Join; it does not look at a trace (see [Config.ModeFor]).
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Mode {
	case ModeAuto, ModeFixed, ModeRate, ModeConcurrency, ModeUserCentric:
	default:
		bad("--mode %q: want fixed, rate, concurrency or user-centric", c.Mode)
	}
	switch c.Arrival {
	case ArrivalConstant, ArrivalPoisson, ArrivalGamma:
	default:
		bad("--arrival %q: want constant, poisson or gamma", c.Arrival)
	}
	switch c.Late {
	case LateBurst, LateShift, LateSkip:
	default:
		bad("--late %q: want burst, shift or skip", c.Late)
	}
	finitePos := func(flag string, v float64, zeroOK bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (v == 0 && !zeroOK) {
			if zeroOK {
				bad("--%s %v: want a finite number ≥ 0", flag, v)
			} else {
				bad("--%s %v: want a finite number > 0", flag, v)
			}
		}
	}
	finitePos("speedup", c.Speedup, false)
	finitePos("request-rate", c.RequestRate, true)
	finitePos("smoothness", c.Smoothness, false)
	finitePos("user-centric-rate", c.UserCentricRate, true)
	nonNeg := func(flag string, d time.Duration) {
		if d < 0 {
			bad("--%s %v: want a duration ≥ 0", flag, d)
		}
	}
	nonNeg("start-offset", c.StartOffset)
	nonNeg("end-offset", c.EndOffset)
	nonNeg("rate-ramp", c.RateRamp)
	nonNeg("concurrency-ramp", c.ConcurrencyRamp)
	nonNeg("duration", c.Duration)
	nonNeg("grace", c.Grace)
	nonNeg("warmup-duration", c.WarmupDuration)
	nonNeg("late-threshold", c.LateThreshold)
	nonNeg("max-lateness", c.MaxLateness)
	nonNegInt := func(flag string, n int) {
		if n < 0 {
			bad("--%s %d: want a number ≥ 0", flag, n)
		}
	}
	nonNegInt("concurrency", c.Concurrency)
	nonNegInt("num-users", c.NumUsers)
	nonNegInt("request-count", c.RequestCount)
	nonNegInt("warmup-requests", c.WarmupRequests)
	nonNegInt("senders", c.Senders)

	if c.EndOffset > 0 && c.EndOffset < c.StartOffset {
		bad("--end-offset %v is before --start-offset %v", c.EndOffset, c.StartOffset)
	}
	if c.Smoothness != DefaultSmoothness && c.Arrival != ArrivalGamma {
		bad("--smoothness %v needs --arrival gamma (it is the gamma shape)", c.Smoothness)
	}
	if c.WarmupRequests > 0 && c.WarmupDuration > 0 {
		bad("--warmup-requests and --warmup-duration are mutually exclusive")
	}
	if c.UserCentricRate > 0 && c.NumUsers == 0 {
		bad("--user-centric-rate needs --num-users")
	}
	if c.NumUsers > 0 && c.UserCentricRate == 0 {
		bad("--num-users needs --user-centric-rate")
	}
	if c.UserCentricRate > 0 && c.RequestRate > 0 {
		bad("--user-centric-rate and --request-rate are mutually exclusive")
	}
	if c.ConcurrencyRamp > 0 && c.Concurrency < 2 {
		bad("--concurrency-ramp needs --concurrency ≥ 2")
	}
	if c.Senders > 0 && c.Concurrency > c.Senders {
		bad("--concurrency %d exceeds --senders %d: the extra sessions could never run", c.Concurrency, c.Senders)
	}
	// Flags that belong to one mode only.
	m := c.Mode
	if m != ModeAuto {
		if m != ModeFixed {
			if c.Speedup != DefaultSpeedup {
				bad("--speedup needs the fixed schedule (--mode fixed)")
			}
			if c.StartOffset != 0 || c.EndOffset != 0 {
				bad("--start-offset/--end-offset need the fixed schedule (--mode fixed)")
			}
		}
		if m != ModeRate {
			if c.RequestRate > 0 {
				bad("--request-rate needs --mode rate, not %s", m)
			}
			if c.RateRamp > 0 {
				bad("--rate-ramp needs --mode rate, not %s", m)
			}
		}
		if m != ModeRate && (c.Arrival != DefaultArrival || c.Smoothness != DefaultSmoothness) {
			bad("--arrival/--smoothness need --mode rate, not %s", m)
		}
		if m != ModeConcurrency && c.ConcurrencyRamp > 0 {
			bad("--concurrency-ramp needs --mode concurrency, not %s", m)
		}
		if m != ModeUserCentric && c.UserCentricRate > 0 {
			bad("--user-centric-rate needs --mode user-centric, not %s", m)
		}
		switch m {
		case ModeRate:
			if c.RequestRate == 0 {
				bad("--mode rate needs --request-rate")
			}
		case ModeConcurrency:
			if c.Concurrency == 0 {
				bad("--mode concurrency needs --concurrency")
			}
		case ModeUserCentric:
			if c.UserCentricRate == 0 {
				bad("--mode user-centric needs --user-centric-rate and --num-users")
			}
		}
	}
	return errors.Join(errs...)
}

// ModeFor resolves ModeAuto for a run over items (nil = synthetic load)
// and checks the mode against them and the flags, reporting every problem
// at once. hasTimestamps tells whether any trace row has a timestamp.
func (c *Config) ModeFor(traceRows bool, hasTimestamps bool) (Mode, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	m := c.Mode
	if m == ModeAuto {
		switch {
		case traceRows && hasTimestamps:
			m = ModeFixed
			var conflicting []string
			if c.RequestRate > 0 {
				conflicting = append(conflicting, "--request-rate")
			}
			if c.UserCentricRate > 0 {
				conflicting = append(conflicting, "--user-centric-rate")
			}
			if c.NumUsers > 0 {
				conflicting = append(conflicting, "--num-users")
			}
			if c.RateRamp > 0 {
				conflicting = append(conflicting, "--rate-ramp")
			}
			if c.Arrival != DefaultArrival || c.Smoothness != DefaultSmoothness {
				conflicting = append(conflicting, "--arrival/--smoothness")
			}
			if c.ConcurrencyRamp > 0 {
				conflicting = append(conflicting, "--concurrency-ramp")
			}
			if len(conflicting) > 0 {
				verb := "conflicts"
				if len(conflicting) > 1 {
					verb = "conflict"
				}
				bad("%s %s with the trace's timestamps (fixed schedule); add --mode rate, concurrency or user-centric to ignore them",
					strings.Join(conflicting, ", "), verb)
			}
		case c.UserCentricRate > 0:
			m = ModeUserCentric
		case c.RequestRate > 0:
			m = ModeRate
		case c.Concurrency > 0:
			m = ModeConcurrency
		default:
			if traceRows {
				bad("the trace has no timestamps: give --request-rate, --concurrency or --user-centric-rate")
			} else {
				bad("no load model: give --request-rate, --concurrency or --user-centric-rate (or a trace)")
			}
		}
		if m != ModeFixed && m != ModeAuto {
			if c.Speedup != DefaultSpeedup {
				bad("--speedup needs the fixed schedule (a trace with timestamps)")
			}
			if c.StartOffset != 0 || c.EndOffset != 0 {
				bad("--start-offset/--end-offset need the fixed schedule (a trace with timestamps)")
			}
		}
		if m == ModeRate && c.ConcurrencyRamp > 0 {
			bad("--concurrency-ramp needs --mode concurrency")
		}
	}
	switch m {
	case ModeFixed:
		if !traceRows {
			bad("the fixed schedule needs a trace")
		} else if !hasTimestamps {
			bad("the fixed schedule needs a trace with timestamps")
		}
	case ModeUserCentric:
		if !traceRows {
			bad("--user-centric-rate needs a trace with multi-turn sessions")
		}
	}
	return m, errors.Join(errs...)
}
