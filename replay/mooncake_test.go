package replay

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

var mooncakeFlag = flag.Bool("mooncake", false, "replay the Mooncake conversation trace at speedup 100 (35 s) and log every burst's lateness (-v)")

// burst is one group of jobs sharing an intended time.
type burst struct {
	at       time.Duration // intended, relative to the first
	size     int
	maxLate  time.Duration // dispatch lateness, worst job
	p50Late  time.Duration
	maxStart time.Duration // sender start lateness, worst job
}

// replayMooncake replays the conversation trace at speedup 100,
// dispatch only, and returns every burst with its lateness.
func replayMooncake(tb testing.TB) ([]burst, Stats) {
	rows, _, err := trace.ReadAll(testfiles.Trace(tb, "mooncake/conversation_trace.jsonl"), trace.Options{Format: trace.FormatMooncake})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := NewConfig()
	cfg.Speedup = 100
	p, err := NewPlan(cfg, rows)
	if err != nil {
		tb.Fatal(err)
	}
	type sample struct{ intended, late, start int64 }
	samples := make([]sample, len(rows))
	h := HandlerFunc(func(_ context.Context, j *Job) {
		samples[j.Item] = sample{j.IntendedNS, int64(j.Lateness()), j.NowNS() - j.IntendedNS}
	})
	st, err := p.Run(context.Background(), h)
	if err != nil {
		tb.Fatal(err)
	}
	slices.SortFunc(samples, func(a, b sample) int { return int(a.intended - b.intended) })
	var out []burst
	for i := 0; i < len(samples); {
		k := i
		var lates []time.Duration
		b := burst{at: time.Duration(samples[i].intended - samples[0].intended)}
		for ; k < len(samples) && samples[k].intended == samples[i].intended; k++ {
			lates = append(lates, time.Duration(samples[k].late))
			b.maxStart = max(b.maxStart, time.Duration(samples[k].start))
		}
		slices.Sort(lates)
		b.size, b.maxLate, b.p50Late = len(lates), lates[len(lates)-1], lates[(len(lates)-1)/2]
		out = append(out, b)
		i = k
	}
	return out, st
}

func TestMooncakeBursts(t *testing.T) {
	if !*mooncakeFlag {
		t.Skip("35 s real-time replay; run with -mooncake (and -v for every burst)")
	}
	bursts, st := replayMooncake(t)
	for i, b := range bursts {
		t.Logf("burst %4d at %9.3fs: %2d requests, lateness p50 %8v max %8v, sender start max %8v",
			i, b.at.Seconds(), b.size, b.p50Late, b.maxLate, b.maxStart)
	}
	t.Logf("%d bursts, %d requests; lateness p50 %v p99 %v max %v; spin %.2f%%, dispatcher CPU %.2f%%",
		len(bursts), st.Dispatched, st.Lateness.P50, st.Lateness.P99, st.Lateness.Max,
		100*st.SpinShare, 100*float64(st.DispatcherCPU)/float64(st.Elapsed))
	if st.Dispatched != 12031 || len(bursts) != 1180 {
		t.Errorf("dispatched %d in %d bursts, want 12031 in 1180", st.Dispatched, len(bursts))
	}
}

// BenchmarkMooncakeReplay reports the distribution of per-burst worst
// lateness (run with -benchtime=1x: one iteration is 35 s).
func BenchmarkMooncakeReplay(b *testing.B) {
	var bursts []burst
	var st Stats
	for b.Loop() {
		bursts, st = replayMooncake(b)
	}
	worst := make([]time.Duration, len(bursts))
	starts := make([]time.Duration, len(bursts))
	for i, x := range bursts {
		worst[i], starts[i] = x.maxLate, x.maxStart
	}
	b.ReportMetric(float64(len(bursts)), "bursts")
	report(b, "burst-worst-", worst)
	report(b, "burst-start-worst-", starts)
	b.ReportMetric(100*st.SpinShare, "spin-%")
}

// TestMooncakePlan plans the real trace (read by the trace package) at
// speedup 100 without running it: 12 031 requests on a fixed schedule in
// 1 180 batches, the last at 3 536 999 ms / 100.
func TestMooncakePlan(t *testing.T) {
	rows, _, err := trace.ReadAll(testfiles.Trace(t, "mooncake/conversation_trace.jsonl"), trace.Options{Format: trace.FormatMooncake})
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewConfig()
	cfg.Speedup = 100
	p, err := NewPlan(cfg, rows)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeFixed || p.Requests() != 12031 || p.Sessions() != 12031 {
		t.Fatalf("mode %s, %d requests in %d sessions", p.Mode(), p.Requests(), p.Sessions())
	}
	batches := map[int64]bool{}
	last := int64(0)
	for _, it := range p.sessFirst {
		batches[p.due[it]] = true
		last = max(last, p.due[it])
	}
	if len(batches) != 1180 || last != int64(3536999*time.Millisecond/100) {
		t.Errorf("%d batches, last at %v", len(batches), time.Duration(last))
	}
}
