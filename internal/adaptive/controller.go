package adaptive

import (
	"errors"
	"fmt"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/search"
)

// Defaults of [Config], AIPerf's.
const (
	// DefaultPeriod is the assessment window (AIPerf's
	// --adaptive-assessment-period default, 30 s).
	DefaultPeriod = 30 * time.Second
	// MinPeriod is the shortest window AIPerf accepts.
	MinPeriod = time.Second
	// DefaultMin is the setting the controller starts from.
	DefaultMin = 1
	// DefaultMinCompleted is how many requests a window needs to decide.
	DefaultMinCompleted = 1
)

// VariableConcurrency is the only control variable: the requests in
// flight of the closed loop.
const VariableConcurrency = "concurrency"

// Config is one adaptive-scale run. Build it with [NewConfig].
type Config struct {
	// Min and Max bound the setting; the controller starts at Min. Max
	// is the run's concurrency ceiling.
	Min, Max int
	// Period is the assessment window.
	Period time.Duration
	// Sustain is how long the boundary found is held before the run
	// ends.
	Sustain time.Duration
	// SLAs must all hold for a window to pass (Metric "TAG:STAT", as
	// [search.ParseConstraint] reads it).
	SLAs []search.Constraint
	// MinCompleted is how many requests a window must complete to
	// decide; fewer make it inconclusive (the setting stays).
	MinCompleted int
}

// NewConfig returns a Config with the defaults; the caller sets Max,
// Sustain and SLAs.
func NewConfig() Config {
	return Config{Min: DefaultMin, Period: DefaultPeriod, MinCompleted: DefaultMinCompleted}
}

// Validate reports every problem at once; it does not change c.
func (c *Config) Validate() error {
	var errs []error
	if c.Min < 1 || c.Max < c.Min {
		errs = append(errs, fmt.Errorf("setting range [%d, %d]: want 1 ≤ min ≤ max (max is the concurrency)", c.Min, c.Max))
	}
	if c.Period <= 0 {
		errs = append(errs, fmt.Errorf("assessment period %v: want > 0", c.Period))
	}
	if c.Sustain <= 0 {
		errs = append(errs, errors.New("sustain duration: required, > 0"))
	}
	if len(c.SLAs) == 0 {
		errs = append(errs, errors.New("SLA: at least one METRIC:STAT:OP:THRESHOLD is required"))
	}
	for _, s := range c.SLAs {
		if _, err := metricKey(s.Metric); err != nil {
			errs = append(errs, fmt.Errorf("SLA %s: %w", s.Metric, err))
		}
	}
	if c.MinCompleted < 1 {
		errs = append(errs, fmt.Errorf("min completed requests %d: want ≥ 1", c.MinCompleted))
	}
	return errors.Join(errs...)
}

// metricKey maps an SLA's "TAG:STAT" to the summary's run metric key.
func metricKey(m string) (string, error) {
	tag, stat, _ := cutMetric(m)
	return summary.RunMetricKey(tag, stat)
}

func cutMetric(m string) (tag, stat string, ok bool) {
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] == ':' {
			return m[:i], m[i+1:], true
		}
	}
	return m, "", false
}

// Window is what one assessment window measured.
type Window struct {
	// StartNS and EndNS bound the window on the run's clock; the
	// requests that completed in it are measured.
	StartNS, EndNS int64
	// Completed and Errors count the measured requests.
	Completed, Errors int
	// Values are the SLA metrics by SLA Metric ("request_latency:p95").
	Values map[string]float64
	// MaxLatencyNS is the longest request latency measured.
	MaxLatencyNS int64
}

// Verdict is a window judged against the SLAs.
type Verdict struct {
	// Conclusive is false when the window completed fewer requests than
	// MinCompleted, or lacked a metric an SLA needs: it decides nothing.
	Conclusive bool
	// Pass: every SLA held.
	Pass bool
	// Binding is the first SLA that failed (its "TAG:STAT:OP:THRESHOLD"),
	// or, when all held, the one closest to its limit.
	Binding string
}

// Judge judges w against slas. A window whose requests all failed
// fails (AIPerf's rule: its latencies are not measured). It is pure.
func Judge(slas []search.Constraint, minCompleted int, w Window) Verdict {
	if w.Completed > 0 && w.Errors == w.Completed {
		return Verdict{Conclusive: true, Binding: "every request failed"}
	}
	if w.Completed < minCompleted {
		return Verdict{}
	}
	v := Verdict{Conclusive: true, Pass: true}
	closest := -1.0
	for _, s := range slas {
		x, ok := w.Values[s.Metric]
		if !ok {
			return Verdict{}
		}
		name := fmt.Sprintf("%s:%s:%g", s.Metric, s.Op, s.Threshold)
		if !s.Holds(x) {
			if v.Pass {
				v.Pass, v.Binding = false, name
			}
			continue
		}
		if r := margin(s, x); v.Pass && (closest < 0 || r < closest) {
			closest, v.Binding = r, name
		}
	}
	return v
}

// margin is how far x is from s's limit, relative to the limit.
func margin(s search.Constraint, x float64) float64 {
	d := s.Threshold - x
	if s.Op == ">" || s.Op == ">=" {
		d = -d
	}
	if s.Threshold != 0 {
		d /= max(s.Threshold, -s.Threshold)
	}
	return d
}
