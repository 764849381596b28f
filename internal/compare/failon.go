package compare

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Threshold is a regression gate on one metric: B fails it when the
// metric is significantly worse ([Worse]) and its difference goes past
// Value in the bad direction.
type Threshold struct {
	// Metric is the metric's name ("ttft.p99").
	Metric string
	// Value is the largest tolerated change in the bad direction: a
	// fraction of A when Relative (0.05 for "+5%"), else in the metric's
	// unit.
	Value    float64
	Relative bool
	// Spec is the threshold as written.
	Spec string
}

// ParseThresholds parses gates such as "ttft.p99:+5%" or
// "output_token_throughput:-3%,e2e.p50:+20ms": a metric name, a colon and
// the tolerated change, as a percentage of A or an amount in the
// metric's unit (the unit may be written after the number). The sign, when
// given, must be the metric's bad direction: + for latencies and the
// error rate, − for throughputs, goodput and the cache hit ratio; without
// one the bad direction is meant. Each spec may hold several gates
// separated by commas.
func ParseThresholds(specs []string) ([]Threshold, error) {
	var out []Threshold
	var errs []error
	for _, s := range specs {
		for f := range strings.SplitSeq(s, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			t, err := parseThreshold(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, t)
		}
	}
	return out, errors.Join(errs...)
}

func parseThreshold(f string) (Threshold, error) {
	name, v, ok := strings.Cut(f, ":")
	if !ok {
		return Threshold{}, fmt.Errorf("fail-on %q: want METRIC:CHANGE such as ttft.p99:+5%%", f)
	}
	name = strings.ToLower(strings.TrimSpace(name))
	d, known := metricByName(name)
	if !known {
		return Threshold{}, fmt.Errorf("fail-on %q: unknown metric %q (one of %s)", f, name, strings.Join(MetricNames(), ", "))
	}
	t := Threshold{Metric: name, Spec: f}
	v = strings.TrimSpace(v)
	bad := "+"
	if d.higher {
		bad = "-"
	}
	if strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-") {
		if v[:1] != bad {
			dir := "lower"
			if d.higher {
				dir = "higher"
			}
			return Threshold{}, fmt.Errorf("fail-on %q: %s is better %s, so a regression is %s (write %s:%s%s)", f, name, dir, bad, name, bad, v[1:])
		}
		v = v[1:]
	}
	switch {
	case strings.HasSuffix(v, "%"):
		t.Relative = true
		v = strings.TrimSuffix(v, "%")
	case strings.HasSuffix(v, d.unit):
		v = strings.TrimSuffix(v, d.unit)
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return Threshold{}, fmt.Errorf("fail-on %q: the change must be a number ≥ 0 followed by %% or the metric's unit %s", f, d.unit)
	}
	if t.Relative {
		x /= 100
	}
	t.Value = x
	return t, nil
}

// Breach is a threshold that a comparison failed.
type Breach struct {
	Threshold Threshold
	Metric    Metric
}

// String says which gate failed and by how much.
func (b Breach) String() string {
	m := b.Metric
	return fmt.Sprintf("%s: %s changed by %s %s (%s), interval [%s, %s] %s", b.Threshold.Spec, m.Name,
		num(m.Diff, m.Unit, true), m.Unit, pct(m.Rel), num(m.DiffLow, m.Unit, true), num(m.DiffHigh, m.Unit, true), m.Unit)
}

// Breaches returns the thresholds r fails: the metric is [Worse] (its
// interval excludes 0 on the bad side) and its difference passes the
// threshold.
func (r *Result) Breaches(ts []Threshold) []Breach {
	var out []Breach
	for _, t := range ts {
		m, ok := r.Metric(t.Metric)
		if !ok || m.Verdict != Worse {
			continue
		}
		change := math.Abs(m.Diff)
		if t.Relative {
			change = math.Abs(m.Rel)
		}
		if change > t.Value {
			out = append(out, Breach{Threshold: t, Metric: m})
		}
	}
	return out
}
