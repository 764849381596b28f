package replay

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"time"
)

// ParseRateSeries reads AIPerf's --request-rate-series JSON: an object
// with exactly one key, "points", an array of {"time_s": S, "qps": R}
// (S seconds ≥ 0, strictly increasing; R > 0; both finite), or that
// array alone; at least two points (AIPerf's RateSeriesConfig). name
// names the source in errors (a file path), which say which point and
// field is wrong and what is wanted.
func ParseRateSeries(name string, data []byte) ([]RatePoint, error) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v; want {\"points\":[{\"time_s\":0,\"qps\":5},{\"time_s\":60,\"qps\":10}]}", name, err)
	}
	var items []any
	switch d := doc.(type) {
	case []any:
		items = d
	case map[string]any:
		p, ok := d["points"]
		if !ok || len(d) != 1 {
			return nil, fmt.Errorf("%s: want exactly one top-level key, points", name)
		}
		if items, ok = p.([]any); !ok {
			return nil, fmt.Errorf("%s: points: want an array of {\"time_s\":S,\"qps\":R}", name)
		}
	default:
		return nil, fmt.Errorf("%s: want an object with points, or a points array", name)
	}
	pts := make([]RatePoint, 0, len(items))
	for i, it := range items {
		obj, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: point %d: want an object {\"time_s\":S,\"qps\":R}", name, i)
		}
		var ts, qps float64
		var hasT, hasQ bool
		for k, v := range obj {
			f, isNum := v.(float64)
			switch k {
			case "time_s":
				ts, hasT = f, isNum
			case "qps":
				qps, hasQ = f, isNum
			default:
				return nil, fmt.Errorf("%s: point %d: unknown field %q; want time_s and qps", name, i, k)
			}
			if !isNum {
				return nil, fmt.Errorf("%s: point %d: %s: want a number", name, i, k)
			}
		}
		switch {
		case !hasT || !hasQ:
			return nil, fmt.Errorf("%s: point %d: want both time_s and qps", name, i)
		case !(ts >= 0) || ts > maxSeriesSeconds:
			return nil, fmt.Errorf("%s: point %d: time_s %v: want seconds ≥ 0 (and below %d)", name, i, ts, int64(maxSeriesSeconds))
		case !(qps > 0) || math.IsInf(qps, 0):
			return nil, fmt.Errorf("%s: point %d: qps %v: want a finite rate > 0", name, i, qps)
		}
		pts = append(pts, RatePoint{At: time.Duration(math.Round(ts * 1e9)), QPS: qps})
	}
	if err := checkRateSeries(pts); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return pts, nil
}

// maxSeriesSeconds bounds a point's time (a year, far below what a
// time.Duration holds).
const maxSeriesSeconds = 365 * 24 * 3600

// RateAt returns the rate of the series at time t after the run's start,
// as AIPerf's value_at: the first point's rate until the first point, then
// linear between points, then the last point's rate.
func RateAt(pts []RatePoint, t time.Duration) float64 {
	if t <= pts[0].At {
		return pts[0].QPS
	}
	last := pts[len(pts)-1]
	if t >= last.At {
		return last.QPS
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].At > t }) // pts[i-1].At ≤ t < pts[i].At
	a, b := pts[i-1], pts[i]
	f := float64(t-a.At) / float64(b.At-a.At)
	return a.QPS + (b.QPS-a.QPS)*f
}

// seriesClock maps the count axis of the arrival process to run time for
// a piecewise-linear rate (the time change of rampTime, generalized).
//
// Derivation: with the rate r(t) of [RateAt] — q₀ on [0, t₀], linear from
// qᵢ to qᵢ₊₁ on [tᵢ, tᵢ₊₁], q_last after the last point — the expected
// count Λ(t) = ∫₀ᵗ r is continuous and strictly increasing, and a renewal
// process of unit-mean gaps on the count axis becomes one of rate r(t)
// under t = Λ⁻¹(x). cum[i] = Λ(tᵢ). Before t₀, t = x/q₀. In segment i,
// with a = qᵢ, k = (qᵢ₊₁ − qᵢ)/(tᵢ₊₁ − tᵢ) and y = x − cum[i], the
// elapsed s solves a·s + k·s²/2 = y; the root in the segment is
// s = 2y / (a + √(a² + 2ky)), the form that avoids cancellation (and is
// y/a when k = 0); a² + 2ky ≥ qᵢ₊₁² > 0 inside the segment, so it never
// takes the root of a negative number. After the last point,
// t = t_last + (x − cum_last)/q_last.
type seriesClock struct {
	at  []float64 // points' times, s
	qps []float64
	cum []float64 // Λ at each point
}

func newSeriesClock(pts []RatePoint) *seriesClock {
	c := &seriesClock{at: make([]float64, len(pts)), qps: make([]float64, len(pts)), cum: make([]float64, len(pts))}
	for i, p := range pts {
		c.at[i], c.qps[i] = p.At.Seconds(), p.QPS
		if i == 0 {
			c.cum[0] = c.qps[0] * c.at[0]
			continue
		}
		c.cum[i] = c.cum[i-1] + (c.qps[i-1]+c.qps[i])/2*(c.at[i]-c.at[i-1])
	}
	return c
}

// time returns Λ⁻¹(x) in ns. It allocates nothing.
func (c *seriesClock) time(x float64) int64 {
	n := len(c.at)
	var t float64
	switch {
	case x <= c.cum[0]:
		t = x / c.qps[0]
	case x >= c.cum[n-1]:
		t = c.at[n-1] + (x-c.cum[n-1])/c.qps[n-1]
	default:
		i := sort.SearchFloat64s(c.cum, x) - 1 // cum[i] < x ≤ cum[i+1]
		a := c.qps[i]
		k := (c.qps[i+1] - a) / (c.at[i+1] - c.at[i])
		y := x - c.cum[i]
		s := 2 * y / (a + math.Sqrt(math.Max(a*a+2*k*y, 0)))
		t = c.at[i] + math.Min(s, c.at[i+1]-c.at[i])
	}
	return int64(math.Round(t * 1e9))
}

// scaleSeries divides every rate of pts by n (a shard's share).
func scaleSeries(pts []RatePoint, n int) []RatePoint {
	out := slices.Clone(pts)
	for i := range out {
		out[i].QPS /= float64(n)
	}
	return out
}

// seriesFor returns the clock of cfg's RateSeries, or nil.
func seriesFor(cfg Config) *seriesClock {
	if len(cfg.RateSeries) == 0 {
		return nil
	}
	return newSeriesClock(cfg.RateSeries)
}

// ReadRateSeries reads and parses the --request-rate-series file at path
// ([ParseRateSeries]).
func ReadRateSeries(path string) ([]RatePoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read request-rate series: %w", err)
	}
	return ParseRateSeries(path, data)
}
