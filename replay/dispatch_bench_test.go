package replay

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Dispatch-only benchmarks: how late jobs leave the dispatcher at 1k, 5k
// and 20k req/s, next to two baselines measured in the same run. One
// b.Loop iteration is one whole schedule; run them with -benchtime=1x:
//
//	go test -run='^$' -bench=Dispatch -benchtime=1x -count=5 ./replay
//
// Metrics (µs): p50/p99/max of the lateness; for the replay, "start" is
// when the sender goroutine began Handle (hand-off included); spin-% is
// the share of wall time spent spinning, cpu-% the dispatcher thread's
// CPU share (getrusage RUSAGE_THREAD).

// benchRates are the schedules: rate (req/s) and length.
var benchRates = []struct {
	rate int
	dur  time.Duration
}{{1000, time.Second}, {5000, 500 * time.Millisecond}, {20000, 500 * time.Millisecond}}

// latenessSample is one benchmark run's result.
type latenessSample struct {
	lat      []time.Duration // per job: actual − target
	start    []time.Duration // replay only: sender start − target
	spin     float64
	cpu      float64
	achieved float64
}

// naiveLoop is the first baseline: a goroutine sleeping with time.Sleep
// until each absolute deadline start + i·period.
func naiveLoop(n int, period time.Duration) latenessSample {
	lat := make([]time.Duration, n)
	start := time.Now()
	for i := range n {
		target := time.Duration(i+1) * period
		if d := target - time.Since(start); d > 0 {
			time.Sleep(d)
		}
		lat[i] = time.Since(start) - target
	}
	return latenessSample{lat: lat}
}

// primitiveLoop is the second baseline: the bare precision primitive
// (locked thread, slack 1 ns, absolute clock_nanosleep, adaptive spin)
// without queues or senders.
func primitiveLoop(n int, period time.Duration) latenessSample {
	lat := make([]time.Duration, n)
	c := newPrecisionSleeper(time.Now())
	undo := c.setup()
	cpu0 := threadCPU()
	begin := c.now()
	for i := range n {
		t := begin + int64(i+1)*int64(period)
		c.sleepUntil(t)
		lat[i] = time.Duration(c.now() - t)
	}
	el := float64(c.now() - begin)
	s := latenessSample{lat: lat, spin: float64(c.spinNS()) / el, cpu: float64(threadCPU()-cpu0) / el}
	undo()
	return s
}

// replayLoop runs the full pipeline: a fixed schedule of n rows period
// apart through Plan.Run with 64 senders that only record the time.
func replayLoop(tb testing.TB, n int, period time.Duration) latenessSample {
	offs := make([]time.Duration, n)
	for i := range offs {
		offs[i] = time.Duration(i) * period
	}
	cfg := NewConfig()
	cfg.Senders = 64
	p, err := NewPlan(cfg, tsRows(offs...))
	if err != nil {
		tb.Fatal(err)
	}
	s := latenessSample{lat: make([]time.Duration, n), start: make([]time.Duration, n)}
	h := HandlerFunc(func(_ context.Context, j *Job) {
		now := j.NowNS()
		s.lat[j.Item] = j.Lateness()
		s.start[j.Item] = time.Duration(now - j.IntendedNS)
	})
	st, err := p.Run(context.Background(), h)
	if err != nil {
		tb.Fatal(err)
	}
	if st.Dispatched != int64(n) {
		tb.Fatalf("dispatched %d of %d", st.Dispatched, n)
	}
	s.spin = st.SpinShare
	s.cpu = float64(st.DispatcherCPU) / float64(st.Elapsed)
	s.achieved = st.AchievedRate
	return s
}

func pct(v []time.Duration, q float64) time.Duration {
	w := slices.Clone(v)
	slices.Sort(w)
	i := int(q*float64(len(w))+0.999999999) - 1
	return w[min(max(i, 0), len(w)-1)]
}

func report(b *testing.B, prefix string, v []time.Duration) {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	b.ReportMetric(us(pct(v, 0.5)), prefix+"p50-µs")
	b.ReportMetric(us(pct(v, 0.99)), prefix+"p99-µs")
	b.ReportMetric(us(pct(v, 1)), prefix+"max-µs")
}

func BenchmarkDispatch(b *testing.B) {
	for _, r := range benchRates {
		n := int(r.dur.Seconds() * float64(r.rate))
		period := time.Second / time.Duration(r.rate)
		name := strconv.Itoa(r.rate/1000) + "k"
		b.Run("naive/"+name, func(b *testing.B) {
			b.ReportAllocs()
			var s latenessSample
			for b.Loop() {
				s = naiveLoop(n, period)
			}
			report(b, "", s.lat)
		})
		b.Run("primitive/"+name, func(b *testing.B) {
			b.ReportAllocs()
			var s latenessSample
			for b.Loop() {
				s = primitiveLoop(n, period)
			}
			report(b, "", s.lat)
			b.ReportMetric(100*s.spin, "spin-%")
			b.ReportMetric(100*s.cpu, "cpu-%")
		})
		b.Run("replay/"+name, func(b *testing.B) {
			b.ReportAllocs()
			var s latenessSample
			for b.Loop() {
				s = replayLoop(b, n, period)
			}
			report(b, "", s.lat)
			report(b, "start-", s.start)
			b.ReportMetric(100*s.spin, "spin-%")
			b.ReportMetric(100*s.cpu, "cpu-%")
			b.ReportMetric(s.achieved, "achieved-req/s")
		})
	}
}

// TestBenchmarkDispatch checks the benchmark's harness on a short
// schedule: every job measured, lateness never negative, the replay's
// sender start never before its dispatch, achieved rate near the target.
func TestBenchmarkDispatch(t *testing.T) {
	const n, period = 200, 200 * time.Microsecond
	for name, s := range map[string]latenessSample{
		"naive": naiveLoop(n, period), "primitive": primitiveLoop(n, period), "replay": replayLoop(t, n, period),
	} {
		if len(s.lat) != n {
			t.Fatalf("%s: %d samples", name, len(s.lat))
		}
		for i, l := range s.lat {
			if l < 0 {
				t.Errorf("%s: job %d early by %v", name, i, -l)
			}
			if s.start != nil && s.start[i] < l {
				t.Errorf("%s: job %d started (%v) before its dispatch (%v)", name, i, s.start[i], l)
			}
		}
		if name == "replay" && (s.achieved < 2000 || s.achieved > 10000) {
			t.Errorf("replay achieved %v req/s for a 5000 req/s schedule", s.achieved)
		}
	}
}

// BenchmarkDispatchBusy dispatches at 10k req/s for 0.5 s while the rest
// of the program keeps Go busy: background goroutines that allocate and
// compute in ~50 µs slices and block briefly in between, using about
// `load` Ps' worth of time (the engine's HTTP work at 10k req/s is ~0.8 of
// a core here). It shows what the dispatcher waits for when Ps are
// contended: metrics as in BenchmarkDispatch ("start" = the sender began
// Handle).
func BenchmarkDispatchBusy(b *testing.B) {
	for _, load := range []float64{0.8, 1.5} {
		b.Run("load="+strconv.FormatFloat(load, 'f', -1, 64), func(b *testing.B) {
			stop := busyGoroutines(load)
			defer stop()
			var s latenessSample
			for b.Loop() {
				s = replayLoop(b, 5000, 100*time.Microsecond)
			}
			report(b, "", s.lat)
			report(b, "start-", s.start)
			b.ReportMetric(s.achieved, "achieved-req/s")
		})
	}
}

// busyGoroutines starts background Go work worth about load Ps: 8
// goroutines, each working in 50 µs slices of allocation while its
// worked time is below its share (load/8) of the elapsed time, and
// sleeping 100 µs otherwise (self-correcting for late timers). stop ends
// them.
func busyGoroutines(load float64) (stop func()) {
	const n, slice = 8, 50 * time.Microsecond
	quit := make(chan struct{})
	done := make(chan struct{}, n)
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			var sink [][]byte
			start, worked := time.Now(), time.Duration(0)
			for {
				select {
				case <-quit:
					return
				default:
				}
				if float64(worked) > load/n*float64(time.Since(start)) {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				t0 := time.Now()
				for time.Since(t0) < slice {
					sink = append(sink[:0], make([]byte, 256))
				}
				worked += time.Since(t0)
			}
		}()
	}
	return func() {
		close(quit)
		for range n {
			<-done
		}
	}
}
