package prompt

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// benchRow is a 128,000-token prompt of 250 blocks of 512 tokens.
func benchRow(idx int64, firstID uint64) trace.Row {
	ids := make([]uint64, 250)
	for i := range ids {
		ids[i] = firstID + uint64(i)
	}
	return row(idx, 250*512, 512, ids...)
}

func benchConfig(format Format) Config {
	cfg := NewConfig()
	cfg.Format = format
	return cfg
}

// BenchmarkAssemble builds a 128k-token prompt whose blocks are all cached:
// the per-request cost before send time (≥ 50M tokens/s wanted). It also
// reports the block cache's memory.
func BenchmarkAssemble(b *testing.B) {
	tok := mustLoad(b, "builtin")
	for _, format := range []Format{FormatText, FormatTokenIDs} {
		b.Run(string(format), func(b *testing.B) {
			s := mustBuilder(b, tok, benchConfig(format))
			r := benchRow(0, 1)
			var p Prompt
			if err := s.Build(&r, &p); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(p.Text)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := s.Build(&r, &p); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, r.InputTokens, cpuTime()-cpu)
			b.ReportMetric(float64(s.Stats().BlockBytes), "cache-bytes")
		})
	}
}

// BenchmarkSynthesize builds 128k-token prompts of ids never seen before:
// first-time block synthesis, including the first-word assignment and the
// cache insertions (≥ 1M tokens/s wanted). The cache is bounded at 64 MiB,
// so it also measures eviction.
func BenchmarkSynthesize(b *testing.B) {
	tok := mustLoad(b, "builtin")
	for _, format := range []Format{FormatText, FormatTokenIDs} {
		b.Run(string(format), func(b *testing.B) {
			cfg := benchConfig(format)
			cfg.BlockCacheBytes = 64 << 20
			s := mustBuilder(b, tok, cfg)
			var p Prompt
			next := uint64(1)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				r := benchRow(0, next)
				next += 250
				if err := s.Build(&r, &p); err != nil {
					b.Fatal(err)
				}
			}
			reportRates(b, 250*512, cpuTime()-cpu)
			b.ReportMetric(float64(s.Stats().BlockBytes), "cache-bytes")
		})
	}
}

// TestBenchmarkSynth checks what the benchmarks build: exact lengths and
// ids, and a cache that stays within its bound.
func TestBenchmarkSynth(t *testing.T) {
	tok := mustLoad(t, "builtin")
	cfg := benchConfig(FormatTokenIDs)
	cfg.BlockCacheBytes = 1 << 20
	s := mustBuilder(t, tok, cfg)
	for i := range 4 {
		r := benchRow(int64(i), uint64(1+i*100)) // overlapping id ranges
		p := build(t, s, r)
		if n := tok.Count(p.Text); n != r.InputTokens || p.Tokens != n {
			t.Fatalf("prompt %d: %d tokens counted, Tokens %d, want %d", i, n, p.Tokens, r.InputTokens)
		}
		if !slices.Equal(tok.Encode(p.Text), p.TokenIDs) {
			t.Fatalf("prompt %d: ids differ from the tokenization", i)
		}
	}
	st := s.Stats()
	if st.BlockBytes > cfg.BlockCacheBytes+8<<10 || st.Evictions == 0 {
		t.Errorf("cache holds %d bytes (limit %d), %d evictions", st.BlockBytes, cfg.BlockCacheBytes, st.Evictions)
	}
}

// TestBuildAllocs: building from cached blocks allocates the text only
// (plus nothing for ids when p.TokenIDs has room).
func TestBuildAllocs(t *testing.T) {
	if raceEnabled {
		// Build takes its scratch from a sync.Pool, which drops a random
		// share of Puts under the race detector.
		t.Skip("allocation counts are meaningless under -race (sync.Pool drops items at random)")
	}
	tok := mustLoad(t, "builtin")
	s := mustBuilder(t, tok, benchConfig(FormatTokenIDs))
	r := benchRow(0, 1)
	var p Prompt
	if err := s.Build(&r, &p); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(10, func() { _ = s.Build(&r, &p) }); a != 1 {
		t.Errorf("Build allocates %v times, want 1 (the text)", a)
	}
}

// cpuTime is the process's user+system CPU time; see reportRates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRates reports tokens/s (wall) and tokens/cpu-s: the shared
// development machines are often oversubscribed, which inflates wall time
// but not CPU time.
func reportRates(b *testing.B, perOp int, cpu time.Duration) {
	total := float64(perOp) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "tokens/cpu-s")
	}
}
