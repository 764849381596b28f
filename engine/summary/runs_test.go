package summary

import (
	"math"
	"testing"
)

func TestStudentTQuantile(t *testing.T) {
	// Reference values from standard t tables (two-sided 95 %, 99 %, 90 %).
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{
		{0.975, 1, 12.7062},
		{0.975, 4, 2.7764},
		{0.975, 9, 2.2622},
		{0.975, 30, 2.0423},
		{0.995, 4, 4.6041},
		{0.95, 2, 2.9200},
		{0.025, 4, -2.7764},
	} {
		if got := StudentTQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("StudentTQuantile(%v, %d) = %.5f, want %.4f", c.p, c.df, got, c.want)
		}
	}
}

func TestTInterval(t *testing.T) {
	iv := TInterval([]float64{10, 12, 11, 13, 9}, 0.95)
	// mean 11, sample std √2.5 = 1.5811, se 0.7071, t(0.975,4) 2.7764.
	if iv.Mean != 11 || math.Abs(iv.Std-1.58114) > 1e-4 || math.Abs(iv.Low-(11-2.7764*0.70711)) > 1e-3 ||
		math.Abs(iv.High-(11+2.7764*0.70711)) > 1e-3 || iv.Min != 9 || iv.Max != 13 || iv.N != 5 {
		t.Errorf("TInterval = %+v", iv)
	}
	if got := iv.RelHalfWidth; math.Abs(got-2.7764*0.70711/11) > 1e-4 {
		t.Errorf("RelHalfWidth = %v", got)
	}
	one := TInterval([]float64{3}, 0.95)
	if one.Low != 3 || one.High != 3 || one.Std != 0 {
		t.Errorf("one value: %+v", one)
	}
}

func TestWilsonInterval(t *testing.T) {
	// Reference: Wilson 95 % for 95/100 is [0.8882, 0.9785]; for 0/10
	// [0, 0.2775]; for 10/10 [0.7225, 1].
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{95, 100, 0.8882, 0.9785}, {0, 10, 0, 0.2775}, {10, 10, 0.7225, 1}} {
		lo, hi := WilsonInterval(c.k, c.n, 0.95)
		if math.Abs(lo-c.lo) > 1e-3 || math.Abs(hi-c.hi) > 1e-3 {
			t.Errorf("WilsonInterval(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestSummarizeRuns(t *testing.T) {
	mk := func(ttft, thr float64) *Summary {
		return &Summary{RequestCount: 10, RequestThroughput: thr,
			Metrics: map[string]*Stats{"time_to_first_token": {Unit: "ms", Avg: ttft, P50: ttft, P99: ttft * 2}}}
	}
	a := SummarizeRuns([]*Summary{mk(10, 5), mk(12, 5), mk(14, 5)}, 0)
	if a.Level != DefaultConfidenceLevel || a.Runs != 3 {
		t.Fatalf("level %v runs %d", a.Level, a.Runs)
	}
	if m := a.Metrics["time_to_first_token.p99"]; m.Mean != 24 || m.Unit != "ms" || m.N != 3 {
		t.Errorf("ttft p99: %+v", m)
	}
	if m := a.Metrics["request_throughput"]; m.Low != 5 || m.High != 5 {
		t.Errorf("constant throughput: %+v", m)
	}
	if _, ok := a.Metrics["goodput"]; ok {
		t.Error("goodput summarized without SLOs")
	}
	if _, ok := a.Metrics["inter_token_latency.p50"]; ok {
		t.Error("a metric no run has is summarized")
	}
}

// TestAcrossRunIntervalsStayInRange: a rate's interval stays ≥ 0 and a
// fraction's inside [0, 1] however spread the runs are (the linear
// t-interval of these goodputs is [−2.99, 11.6]), each holds its mean,
// and a quantity that may be negative keeps the linear interval.
func TestAcrossRunIntervalsStayInRange(t *testing.T) {
	slo := Options{Goodput: []SLO{{Tag: "time_to_first_token", Value: 100}}}
	mk := func(goodput, good, errRate, lateness float64) *Summary {
		s := &Summary{Options: slo, Goodput: goodput, RequestThroughput: goodput + 1, GoodRequestFraction: good,
			RequestCount: 100, ErrorRequestCount: int(errRate * 100),
			Metrics: map[string]*Stats{"schedule_lateness": {Unit: "ms", P99: lateness}}}
		s.RequestCount -= s.ErrorRequestCount
		return s
	}
	runs := []*Summary{mk(0, 0.99, 0, -2), mk(0.8, 0.9, 0, 1), mk(2.5, 1, 0.2, -1), mk(6.3, 0.95, 0, 3), mk(12, 1, 0, 0)}
	a := SummarizeRuns(runs, 0.95)
	for _, c := range []struct {
		key    string
		scale  string
		lo, hi float64 // the range the interval must stay in
	}{
		{"goodput", ScaleLog, 0, math.Inf(1)},
		{"request_throughput", ScaleLog, 0, math.Inf(1)},
		{"good_request_fraction", ScaleLogit, 0, 1},
		{"error_rate", ScaleLogit, 0, 1},
	} {
		iv := a.Metrics[c.key]
		lin := TInterval(iv.Values, 0.95)
		if lin.Low >= c.lo && lin.High <= c.hi {
			t.Errorf("%s: the linear interval [%v, %v] is in range: the case tests nothing", c.key, lin.Low, lin.High)
		}
		if iv.Scale != c.scale || iv.Low < c.lo || iv.High > c.hi || !(iv.Low < iv.Mean && iv.Mean < iv.High) {
			t.Errorf("%s: %s interval [%v, %v] of mean %v, want %s inside [%v, %v] around the mean", c.key, iv.Scale, iv.Low, iv.High, iv.Mean, c.scale, c.lo, c.hi)
		}
		if want := (iv.High - iv.Low) / 2 / iv.Mean; math.Abs(iv.RelHalfWidth-want) > 1e-12 {
			t.Errorf("%s: rel_half_width %v, want %v", c.key, iv.RelHalfWidth, want)
		}
	}
	if iv := a.Metrics["schedule_lateness.p99"]; iv.Scale != ScaleLinear || iv.Low >= 0 {
		t.Errorf("schedule lateness: %s [%v, %v], want the linear t-interval (it can be negative)", iv.Scale, iv.Low, iv.High)
	}
	// The log interval of a positive mean: mean·exp(∓t·se/mean).
	g := a.Metrics["goodput"]
	h := g.TCritical * g.SE / g.Mean
	if math.Abs(g.Low-g.Mean*math.Exp(-h)) > 1e-9 || math.Abs(g.High-g.Mean*math.Exp(h)) > 1e-9 {
		t.Errorf("goodput [%v, %v], want mean·exp(∓%v)", g.Low, g.High, h)
	}
}
