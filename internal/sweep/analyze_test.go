package sweep

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// arrivals builds a load of n requests intended every gap ns, each served
// in service ns by one server that takes them in order (a single queue):
// request i ends at max(arrival_i, end_{i−1}) + service, and its TTFT is
// its wait plus ttft0.
func arrivals(n int, gap, service, ttft0 int64) *load {
	l := &load{}
	var prevEnd int64
	for i := range n {
		at := int64(i+1) * gap
		start := max(at, prevEnd)
		end := start + service
		prevEnd = end
		l.intended = append(l.intended, at)
		l.end = append(l.end, end)
		l.endAt = append(l.endAt, at)
		l.ttftAt = append(l.ttftAt, at)
		l.ttft = append(l.ttft, start-at+ttft0)
	}
	return l
}

func TestJudge(t *testing.T) {
	const ms = int64(1e6)
	for _, c := range []struct {
		name string
		l    *load
		open bool
		want []string
	}{
		// Service 8 ms, arrivals every 10 ms: the server keeps up.
		{"below capacity", arrivals(100, 10*ms, 8*ms, 5*ms), true, nil},
		// Arrivals every 8 ms, service 10 ms: completions at 80 % of
		// the rate, the backlog grows at 25 requests/s, waits grow.
		{"above capacity", arrivals(100, 8*ms, 10*ms, 5*ms), true, []string{"rate", "backlog", "ttft_rising"}},
		// Closed loop: no rate check, the TTFT rise alone counts.
		{"closed loop", arrivals(100, 8*ms, 10*ms, 5*ms), false, []string{"ttft_rising"}},
		{"too few", arrivals(5, 8*ms, 10*ms, 5*ms), true, nil},
	} {
		s := judge(c.l, c.open, DefaultSaturationTolerance)
		if diff := cmp.Diff(c.want, s.Reasons); diff != "" {
			t.Errorf("%s: reasons (-want +got):\n%s\n%+v", c.name, diff, s)
		}
	}
	s := judge(arrivals(100, 8*ms, 10*ms, 5*ms), true, DefaultSaturationTolerance)
	// Each request waits 2 ms longer than the one 8 ms before it: a
	// growth of 0.25, a rate ratio of 1/1.25 = 0.8; the backlog grows at 125 − 100 = 25/s, a
	// growth of 25/125 = 0.2.
	if s.RateRatio < 0.799 || s.RateRatio > 0.801 || s.BacklogGrowth < 0.18 || s.BacklogGrowth > 0.22 {
		t.Errorf("above capacity: %+v", s)
	}
}

func TestParetoAndKnee(t *testing.T) {
	rows := []Row{
		{Point: "a", Requests: 1, OutputThroughput: 100, E2EP99: 100},
		{Point: "b", Requests: 1, OutputThroughput: 200, E2EP99: 105},
		{Point: "c", Requests: 1, OutputThroughput: 300, E2EP99: 120},
		{Point: "d", Requests: 1, OutputThroughput: 320, E2EP99: 400},
		{Point: "e", Requests: 1, OutputThroughput: 250, E2EP99: 500}, // dominated by c
		{Point: "f", Requests: 0, OutputThroughput: 0, E2EP99: 0},     // nothing measured
	}
	front := Pareto(rows)
	var names []string
	for _, i := range front {
		names = append(names, rows[i].Point)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, names); diff != "" {
		t.Errorf("front (-want +got):\n%s", diff)
	}
	// Normalized x − y: a 0−0, b 0.455−0.017, c 0.909−0.067, d 1−1: c.
	if k := Knee(rows, front); k < 0 || rows[k].Point != "c" {
		t.Errorf("knee = %d", k)
	}
	if k := Knee(rows, front[:2]); k != -1 {
		t.Errorf("knee of two points = %d, want none", k)
	}
}

// slots builds a load of n requests intended every gap ns, served FIFO by
// s slots in service ns each plus jitter[i%len(jitter)] ns: request i
// starts when it arrives or when the earliest slot frees, whichever is
// later.
func slots(n, s int, gap, service int64, jitter []int64) *load {
	l := &load{}
	free := make([]int64, s)
	for i := range n {
		at := int64(i+1) * gap
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(at, free[k])
		end := start + service
		if len(jitter) > 0 {
			end += jitter[i%len(jitter)]
		}
		free[k] = end
		l.intended = append(l.intended, at)
		l.end = append(l.end, end)
		l.endAt = append(l.endAt, at)
		l.ttftAt = append(l.ttftAt, at)
		l.ttft = append(l.ttft, start-at+5e6)
	}
	return l
}

// TestRateCheckAgainstItsNoise: the rate check flags a deficit larger
// than the point's own noise and the tolerance, so a load a few percent
// past capacity is saturated where the former fixed 10 % let it pass,
// and a noisy point below capacity is not.
func TestRateCheckAgainstItsNoise(t *testing.T) {
	const ms = int64(1e6)
	// Scatter of ±25 ms about the service time, no pattern in 7.
	jitter := []int64{25 * ms, -20 * ms, 5 * ms, -25 * ms, 15 * ms, -5 * ms, 10 * ms}
	for _, c := range []struct {
		name string
		l    *load
		rate bool
	}{
		// Four slots of 480 ms: C = 8.33/s. Asked 8.62/s (a gap of
		// 116 ms), 40 requests: completions at C/R = 0.966, a 3.4 %
		// deficit, under 10 % but well above the slope's noise.
		{"3.4% past capacity", slots(40, 4, 116*ms, 480*ms, jitter), true},
		// 0.95·C: every slot idles between requests, nothing grows.
		{"0.95 of capacity", slots(40, 4, 126*ms, 480*ms, jitter), false},
		// 12 requests below capacity with ±250 ms of scatter: the fitted
		// slope is large, and so is its noise.
		{"short and noisy", slots(12, 4, 126*ms, 480*ms, []int64{250 * ms, -250 * ms, 200 * ms, 250 * ms, -100 * ms, 250 * ms}), false},
	} {
		s := judge(c.l, true, DefaultSaturationTolerance)
		got := slices.Contains(s.Reasons, "rate")
		t.Logf("%s: deficit %.4f, se %.4f, reasons %v", c.name, 1-s.RateRatio, s.RateDeficitSE, s.Reasons)
		if got != c.rate {
			t.Errorf("%s: rate check %v, want %v (deficit %.4f, se %.4f)", c.name, got, c.rate, 1-s.RateRatio, s.RateDeficitSE)
		}
	}
}
