package prompt

import (
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
)

// fidelity checks, for every row of a trace, the properties the replay
// relies on, with the tokenizer the prompts were built for:
//
//   - the prompt text tokenizes to exactly input_length tokens (counting
//     the assembled text once per row is the real proof), and its token ids
//     are that tokenization (every row's count; full ids every 61st row);
//   - equal ids give equal blocks: the tokens of every full block of id h
//     hash to the same value in every row (so rows sharing k leading ids
//     share their first k·B tokens), and a partial block starts like the
//     full one;
//   - sibling blocks (different ids after the same parent, or first blocks)
//     start with different tokens, so rows sharing exactly k leading ids
//     differ at token k·B;
//   - consecutive rows share exactly min(k·B, both lengths) leading tokens;
//   - ExpectedCachedTokens is the infinite-cache leading run min(m·B, L).
type fidelity struct {
	t        *testing.T
	tok      tokenizer.Tokenizer
	seed     maphash.Seed
	full     map[uint64]uint64 // id → hash of its full block's tokens
	first    map[uint64]int    // id → its block's first token
	children map[[2]uint64]uint64
	seen     map[uint64]bool
	prevIDs  []uint64
	prevToks []int
	rows     int
}

func newFidelity(t *testing.T, tok tokenizer.Tokenizer) *fidelity {
	return &fidelity{
		t: t, tok: tok, seed: maphash.MakeSeed(),
		full: map[uint64]uint64{}, first: map[uint64]int{}, children: map[[2]uint64]uint64{}, seen: map[uint64]bool{},
	}
}

// check verifies one built row; it returns false after reporting a failure
// so callers can stop early.
func (f *fidelity) check(row *trace.Row, p *Prompt) bool {
	t := f.t
	t.Helper()
	L, B, ids := row.InputTokens, row.BlockSize, row.HashIDs
	if !p.Synthesized || p.Tokens != L || len(p.TokenIDs) != L {
		t.Errorf("row %d: synthesized %v, Tokens %d, %d ids; want %d", row.Index, p.Synthesized, p.Tokens, len(p.TokenIDs), L)
		return false
	}
	if n := f.tok.Count(p.Text); n != L {
		t.Errorf("row %d: prompt is %d tokens for %s, want input_length %d", row.Index, n, f.tok.Name(), L)
		return false
	}
	if f.rows%61 == 0 {
		if got := f.tok.Encode(p.Text); !slices.Equal(got, p.TokenIDs) {
			t.Errorf("row %d: TokenIDs differ from the tokenization of Text", row.Index)
			return false
		}
	}
	f.rows++

	m := 0
	for m < len(ids) && f.seen[ids[m]] {
		m++
	}
	if want := min(m*B, L); p.ExpectedCachedTokens != want {
		t.Errorf("row %d: ExpectedCachedTokens %d, want %d (leading run %d)", row.Index, p.ExpectedCachedTokens, want, m)
		return false
	}
	for j, h := range ids {
		f.seen[h] = true
		lo, hi := j*B, min((j+1)*B, L)
		first := p.TokenIDs[lo]
		if prev, ok := f.first[h]; ok && prev != first {
			t.Errorf("row %d block %d (id %d): first token %d, earlier %d", row.Index, j, h, first, prev)
			return false
		}
		f.first[h] = first
		parent := [2]uint64{0, 1} // root
		if j > 0 {
			parent = [2]uint64{ids[j-1], 0}
		}
		key := [2]uint64{parent[0]<<1 | parent[1], uint64(first)}
		if other, ok := f.children[key]; ok && other != h {
			t.Errorf("row %d block %d: ids %d and %d follow the same parent and both start with token %d", row.Index, j, other, h, first)
			return false
		}
		f.children[key] = h
		if hi-lo == B {
			sum := hashInts(f.seed, p.TokenIDs[lo:hi])
			if prev, ok := f.full[h]; ok && prev != sum {
				t.Errorf("row %d block %d (id %d): tokens differ from an earlier row's block with the same id", row.Index, j, h)
				return false
			}
			f.full[h] = sum
		}
	}

	if f.prevToks != nil {
		k := 0
		for k < len(ids) && k < len(f.prevIDs) && ids[k] == f.prevIDs[k] {
			k++
		}
		want := min(k*B, L, len(f.prevToks))
		got := 0
		for got < len(p.TokenIDs) && got < len(f.prevToks) && p.TokenIDs[got] == f.prevToks[got] {
			got++
		}
		if got != want {
			t.Errorf("row %d shares %d leading ids (%d tokens) with the previous row but %d leading tokens", row.Index, k, want, got)
			return false
		}
	}
	f.prevIDs = append(f.prevIDs[:0], ids...)
	f.prevToks = append(f.prevToks[:0], p.TokenIDs...)
	return true
}

func hashInts(seed maphash.Seed, v []int) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	var b [8]byte
	for _, x := range v {
		for i := range b {
			b[i] = byte(uint64(x) >> (8 * i))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// runFidelity builds every row with s (after Prepare) and checks it.
func runFidelity(t *testing.T, s *Builder, rows []trace.Row) {
	t.Helper()
	if err := s.Prepare(rows); err != nil {
		t.Fatal(err)
	}
	f := newFidelity(t, s.Tokenizer())
	var p Prompt
	for i := range rows {
		if err := s.Build(&rows[i], &p); err != nil {
			t.Fatal(err)
		}
		if !f.check(&rows[i], &p) {
			return
		}
	}
	st := s.Stats()
	if st.FirstWordCollisions != 0 {
		t.Errorf("%d first-word collisions with %d words", st.FirstWordCollisions, st.Words)
	}
	t.Logf("%s: %d rows, %d tokens, %d words; blocks: %d hits, %d misses, %d evictions, %d cached (%d bytes); %d ids (%d bytes)",
		s.Tokenizer().Name(), len(rows), st.Tokens, st.Words, st.BlockHits, st.BlockMisses, st.Evictions, st.Blocks, st.BlockBytes, st.IDs, st.IDBytes)
}

func fidelityConfig() Config {
	cfg := NewConfig()
	cfg.Format = FormatTokenIDs
	cfg.Seed = 42
	return cfg
}

// TestFidelityMooncake runs the fidelity checks over every row of both
// real Mooncake traces (512-token blocks), with the builtin tokenizer and a
// Llama-3-style tokenizer.json. The synthetic trace runs with a 4 MiB block
// cache, so blocks are evicted and rebuilt; the checks then also prove
// that a rebuilt block equals the original.
func TestFidelityMooncake(t *testing.T) {
	if raceEnabled {
		t.Skip("counts 410M tokens: runs without -race (scripts/test.sh); TestFidelityBailian and TestConcurrentBuild cover the race build")
	}
	for _, file := range []string{"conversation_trace.jsonl", "synthetic_trace.jsonl"} {
		rows := readTrace(t, file)
		for _, name := range []string{"builtin", "llama3-style"} {
			t.Run(file+"/"+name, func(t *testing.T) {
				t.Parallel()
				var tok tokenizer.Tokenizer
				if name == "builtin" {
					tok = mustLoad(t, "builtin")
				} else {
					tok = largeTokenizer(t)
				}
				cfg := fidelityConfig()
				cfg.BlockCacheBytes = 64 << 20
				if file == "synthetic_trace.jsonl" {
					cfg.BlockCacheBytes = 4 << 20
				}
				s := mustBuilder(t, tok, cfg)
				runFidelity(t, s, rows)
				if file == "synthetic_trace.jsonl" && s.Stats().Evictions == 0 {
					t.Errorf("no evictions with a %d-byte cache", cfg.BlockCacheBytes)
				}
			})
		}
	}
}

// bailianSample generates a Bailian-shaped trace: 16-token blocks, raw
// 64-bit ids (never dense), sessions whose turns carry the parent's full
// blocks plus new ones (cumulative input lengths), partial last blocks.
// roots bounds how many sessions start (first blocks are siblings).
func bailianSample(rows, roots int, seed uint64) []trace.Row {
	r := rand.New(rand.NewPCG(seed, 16))
	const B = 16
	var out []trace.Row
	var open [][]uint64 // ids of rows that may get a child
	for i := range rows {
		var ids []uint64
		if len(open) == 0 || (i < roots && r.IntN(3) == 0) || r.IntN(8) == 0 && i < roots {
			ids = nil // a new root
		} else {
			parent := open[r.IntN(len(open))]
			full := len(parent) - 1 // drop the parent's partial last block
			ids = append(ids, parent[:full]...)
		}
		for range 1 + r.IntN(40) {
			ids = append(ids, r.Uint64())
		}
		k := len(ids)
		L := (k-1)*B + 1 + r.IntN(B)
		out = append(out, trace.Row{
			Index: int64(i), Line: int64(i + 1), InputTokens: L, OutputTokens: 1 + r.IntN(300),
			BlockSize: B, HashIDs: ids, Cumulative: true, SessionID: "s",
		})
		open = append(open, ids)
	}
	return out
}

// TestFidelityBailian runs the checks over a Bailian-shaped sample with
// 16-token blocks, for the builtin tokenizer, the Llama-3-style one and
// the small Llama-2-style SentencePiece one (whose 83 words limit the
// number of roots).
func TestFidelityBailian(t *testing.T) {
	tests := []struct {
		name string
		tok  func(testing.TB) tokenizer.Tokenizer
	}{
		{"builtin", func(t testing.TB) tokenizer.Tokenizer { return mustLoad(t, "builtin") }},
		{"llama3-style", largeTokenizer},
		{"llama2-style", func(t testing.TB) tokenizer.Tokenizer { return mustLoad(t, "../tokenizer/testdata/llama2-style") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := bailianSample(3000, 60, 7)
			runFidelity(t, mustBuilder(t, tt.tok(t), fidelityConfig()), rows)
		})
	}
}
