package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy returns the bytes f allocates (all goroutines: the test
// runs nothing else meanwhile).
func allocatedBy(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestCountOneWordBounded: counting one unbroken word of megabytes (a
// server answering "aaaa…") takes memory that does not grow with the
// word: the word is merged in pieces of at most maxMergeBytes with
// reused scratch memory. Before, one 200 MB word held about 17 GB.
func TestCountOneWordBounded(t *testing.T) {
	for _, spec := range []string{"builtin", "testdata/llama3-style", "testdata/llama2-style"} {
		t.Run(spec, func(t *testing.T) {
			tok := mustLoad(t, spec)
			tok.Count(strings.Repeat("a", 64<<10)) // scratch memory exists
			for _, word := range []string{randomWord(512 << 10), strings.Repeat("a", 1<<20), strings.Repeat("a", 4<<20)} {
				n := len(word)
				var got int
				alloc := allocatedBy(func() { got = tok.Count(word) })
				// Normalization may copy the text once (SentencePiece's
				// space mark); beyond that, nothing grows with n.
				if alloc > uint64(n)+1<<20 {
					t.Errorf("counting one %d-byte word allocated %d bytes, want at most the text's size plus 1 MiB", n, alloc)
				}
				if got <= 0 || got > n {
					t.Errorf("%d-byte word: %d tokens", n, got)
				}
			}
		})
	}
}

// countSteps counts text with its own scratch memory and returns the
// tokens and the merge work (mergeScratch.steps) of its long words.
func countSteps(t *testing.T, tok Tokenizer, text string) (int, int) {
	t.Helper()
	b := tok.(*bpe)
	if b.norm != nil {
		text = b.norm(text)
	}
	sc := new(mergeScratch)
	n, err := b.countLong(context.Background(), text, &sc)
	if err != nil {
		t.Fatal(err)
	}
	return n, sc.steps
}

// randomWord returns n random lowercase letters: one pre-token whose
// pieces all differ, the most merge work per byte.
func randomWord(n int) string {
	r := rand.New(rand.NewPCG(uint64(n), 3))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// TestCountOneWordLinear: the merge work of one long word grows like its
// length: four times the bytes, four times the steps (the merge of one
// unbounded word is O(n log n) and held every symbol at once). A word of
// one repeated piece merges that piece once.
func TestCountOneWordLinear(t *testing.T) {
	for _, spec := range []string{"builtin", "testdata/llama3-style", "testdata/llama2-style"} {
		t.Run(spec, func(t *testing.T) {
			tok := mustLoad(t, spec)
			w1, w4 := randomWord(128<<10), randomWord(512<<10)
			n1, s1 := countSteps(t, tok, w1)
			n4, s4 := countSteps(t, tok, w4)
			if r := float64(s4) / float64(s1); r < 3.95 || r > 4.05 {
				t.Errorf("merge steps: %d for 128 KiB, %d for 512 KiB (%.2f×), want 4×", s1, s4, r)
			}
			if c := tok.Count(w1); n1 != c {
				t.Errorf("tokens: %d counted in pieces, Count says %d", n1, c)
			}
			if r := float64(n4) / float64(n1); r < 3.9 || r > 4.1 {
				t.Errorf("tokens: %d for 128 KiB, %d for 512 KiB (%.2f×)", n1, n4, r)
			}
			_, same1 := countSteps(t, tok, strings.Repeat("a", 256<<10))
			if _, same4 := countSteps(t, tok, strings.Repeat("a", 1<<20)); same1 != same4 {
				t.Errorf("a repeated: %d merge steps for 256 KiB, %d for 1 MiB, want the same", same1, same4)
			}
		})
	}
}

// TestLongWordRoundTrip: a pre-token merged in pieces encodes to ids that
// decode to it again, cut between characters, and Count agrees with Encode.
func TestLongWordRoundTrip(t *testing.T) {
	text := strings.Repeat("ü", 3000) + randomWord(5000) + strings.Repeat(" ", 3000) + "x" + strings.Repeat("-", 2000)
	for _, spec := range []string{"builtin", "testdata/llama3-style", "testdata/llama2-style"} {
		tok := mustLoad(t, spec)
		ids := tok.Encode(text)
		if got := tok.Decode(ids); got != text {
			t.Errorf("%s: the round trip changed the text (%d bytes, want %d)", spec, len(got), len(text))
		}
		if n := tok.Count(text); n != len(ids) {
			t.Errorf("%s: Count %d, Encode %d ids", spec, n, len(ids))
		}
	}
}

// TestCountContext: CountContext stops at its context's end, also inside
// one long word, and otherwise counts what Count counts.
func TestCountContext(t *testing.T) {
	tok := mustLoad(t, "builtin").(*bpe)
	for name, text := range map[string]string{
		"one word":  strings.Repeat("a", 1<<20),
		"words":     strings.Repeat("lorem ipsum dolor ", 1<<13),
		"non-ASCII": strings.Repeat("ünïcödé wörds ", 1<<13),
	} {
		t.Run(name, func(t *testing.T) {
			n, err := tok.CountContext(context.Background(), text)
			if err != nil || n != tok.Count(text) || n == 0 {
				t.Fatalf("CountContext = %d, %v; Count = %d", n, err, tok.Count(text))
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errors.New("stop"))
			got, err := tok.CountContext(ctx, text)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled: err %v, want context.Canceled", err)
			}
			if got >= n {
				t.Errorf("cancelled: counted all %d tokens", got)
			}
		})
	}
}

// BenchmarkCountOneWord counts one unbroken word of each size with the
// builtin tokenizer: a server's gigantic one-word answer, "aaaa…" (same)
// or random letters (random, every piece new: the most work per byte).
// ns/byte and B/op must not grow with the size. cpu-ns/byte is the
// process's CPU time per byte (the shared machines inflate wall time).
func BenchmarkCountOneWord(b *testing.B) {
	tok := mustLoad(b, "builtin")
	for _, c := range []struct {
		name string
		word func(int) string
	}{{"same", func(n int) string { return strings.Repeat("a", n) }}, {"random", randomWord}} {
		for _, n := range []int{1 << 20, 4 << 20, 20 << 20} {
			word := c.word(n)
			b.Run(fmt.Sprintf("%s/%dMiB", c.name, n>>20), func(b *testing.B) {
				b.SetBytes(int64(n))
				b.ReportAllocs()
				cpu := cpuTime()
				for b.Loop() {
					tok.Count(word)
				}
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/float64(n), "cpu-ns/byte")
			})
		}
	}
}

// TestBenchmarkCountOneWord checks what BenchmarkCountOneWord counts: a
// long word's pieces give the tokens the whole word's merge gives when the
// cuts fall between tokens ("a"×8 is one o200k token and pieces are a
// multiple of 8 bytes).
func TestBenchmarkCountOneWord(t *testing.T) {
	tok := mustLoad(t, "builtin")
	if got, want := tok.Count(strings.Repeat("a", 1<<20)), 1<<17; got != want {
		t.Errorf("1 MiB of a: %d tokens, want %d", got, want)
	}
}

// TestPretokenBounded: no pre-token is longer than maxPretokenBytes,
// whichever splitter finds it (the regular expression for non-ASCII text,
// the hand-written ASCII one, a gap the expression does not match), so
// the work between two looks at CountContext's context is bounded; and
// Count still agrees with Encode. Before, a 200 MB run of "é" was one
// pre-token the expression took 4.5 s to find, with no look at the
// context (issue 37, item 21).
func TestPretokenBounded(t *testing.T) {
	for _, spec := range []string{"builtin", "testdata/llama3-style", "testdata/llama2-style"} {
		t.Run(spec, func(t *testing.T) {
			b := mustLoad(t, spec).(*bpe)
			for _, text := range []string{strings.Repeat("é", 200<<10), strings.Repeat("a", 300<<10) + " b",
				"x " + strings.Repeat("\x01", 200<<10), strings.Repeat(" ", 200<<10) + "y"} {
				if b.norm != nil {
					text = b.norm(text)
				}
				longest, total := 0, 0
				emit := func(w string) bool {
					longest, total = max(longest, len(w)), total+len(w)
					return true
				}
				if b.fast != nil && (b.fastAll || isASCII(text)) {
					for i := 0; i < len(text); {
						e := nextPretoken(b.fast, text, i)
						emit(text[i:e])
						i = e
					}
				} else {
					b.slow.splitAll(text, emit)
				}
				if longest > maxPretokenBytes || total != len(text) {
					t.Errorf("%.8q…: longest pre-token %d bytes (cap %d), %d of %d bytes split", text, longest, maxPretokenBytes, total, len(text))
				}
				if n, enc := b.Count(text), len(b.Encode(text)); n != enc {
					t.Errorf("%.8q…: Count %d, Encode %d tokens", text, n, enc)
				}
			}
		})
	}
}
