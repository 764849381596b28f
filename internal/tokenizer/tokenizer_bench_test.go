package tokenizer

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
)

// benchText returns about n bytes of English-like text made of words
// never seen before (fresh random letters), so every word is a cache miss
// on a cold cache.
func benchText(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(12) == 0 {
			b.WriteString(". ")
		}
		b.WriteByte(' ')
		for range 2 + r.IntN(8) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return b.String()
}

func benchTokenizers(b *testing.B) map[string]Tokenizer {
	return map[string]Tokenizer{
		"builtin":      mustLoad(b, "builtin"),
		"llama3-style": mustLoad(b, "testdata/llama3-style"),
		"llama2-style": mustLoad(b, "testdata/llama2-style"),
	}
}

// BenchmarkEncodeCold encodes text whose words are all new: the BPE merge
// cost. tokens/s is the figure of merit (≥ 1M/s wanted).
func BenchmarkEncodeCold(b *testing.B) {
	for name, tok := range benchTokenizers(b) {
		b.Run(name, func(b *testing.B) {
			bt := tok.(*bpe)
			text := benchText(1<<20, 1)
			n := tok.Count(text)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			dst := make([]int, 0, n)
			cpu := cpuTime()
			for b.Loop() {
				bt.cache = newWordCache() // cold: every word merges again
				dst = tok.AppendEncode(dst[:0], text)
			}
			reportRates(b, n, cpuTime()-cpu)
		})
	}
}

// BenchmarkCountWarm counts text whose words are all cached: the
// pre-tokenizer and cache lookup cost.
func BenchmarkCountWarm(b *testing.B) {
	for name, tok := range benchTokenizers(b) {
		b.Run(name, func(b *testing.B) {
			text := strings.Repeat(tokenizertest.Corpus+" ", 200)
			n := tok.Count(text)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				tok.Count(text)
			}
			reportRates(b, n, cpuTime()-cpu)
		})
	}
}

// TestBenchmarkEncode checks what the benchmarks measure: a cold encode
// equals a warm one, and counting equals encoding.
func TestBenchmarkEncode(t *testing.T) {
	for name, tok := range map[string]Tokenizer{"builtin": mustLoad(t, "builtin"), "llama2-style": mustLoad(t, "testdata/llama2-style")} {
		text := benchText(1<<14, 2)
		warm := tok.Encode(text)
		bt := tok.(*bpe)
		saved := bt.cache
		bt.cache = newWordCache()
		cold := tok.Encode(text)
		bt.cache = saved
		if len(cold) != len(warm) || tok.Count(text) != len(warm) {
			t.Errorf("%s: cold %d, warm %d, count %d tokens", name, len(cold), len(warm), tok.Count(text))
		}
		if tok.Decode(cold) != text {
			t.Errorf("%s: round trip failed", name)
		}
	}
}

// TestEncodeAllocs: with a warm cache and room in dst, encoding and
// counting ASCII text allocate nothing.
func TestEncodeAllocs(t *testing.T) {
	for _, spec := range []string{"builtin", "testdata/llama3-style"} {
		tok := mustLoad(t, spec)
		text := strings.Repeat(tokenizertest.Corpus+" ", 4)
		dst := tok.Encode(text)
		if a := testing.AllocsPerRun(20, func() { dst = tok.AppendEncode(dst[:0], text) }); a != 0 {
			t.Errorf("%s: AppendEncode allocates %v times, want 0", spec, a)
		}
		if a := testing.AllocsPerRun(20, func() { tok.Count(text) }); a != 0 {
			t.Errorf("%s: Count allocates %v times, want 0", spec, a)
		}
	}
}

// cpuTime is the process's user+system CPU time. Benchmarks report
// tokens per CPU-second next to tokens per wall-second because the shared
// development machines are often oversubscribed, which inflates wall time
// but not CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportRates reports tokens/s (wall) and tokens/cpu-s for perOp tokens
// per iteration.
func reportRates(b *testing.B, perOp int, cpu time.Duration) {
	total := float64(perOp) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "tokens/s")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "tokens/cpu-s")
	}
}
