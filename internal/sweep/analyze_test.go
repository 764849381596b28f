package sweep

import (
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
