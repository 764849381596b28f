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
