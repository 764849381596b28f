package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
)

func row(idx int64, L, B int, ids ...uint64) trace.Row {
	return trace.Row{Index: idx, Line: idx + 1, InputTokens: L, BlockSize: B, HashIDs: ids}
}

func build(t *testing.T, s *Builder, r trace.Row) Prompt {
	t.Helper()
	var p Prompt
	if err := s.Build(&r, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func TestConfigValidate(t *testing.T) {
	if err := NewConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := Config{Mismatch: "maybe", Format: "bytes", ISLCorrection: -1, BlockCacheBytes: 10, ExpectedCacheTokens: -5}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Mismatch", "Format", "ISLCorrection", "block cache", "expected-cache"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if _, err := New(mustLoad(t, "builtin"), bad); err == nil {
		t.Error("New accepted an invalid config")
	}
}

// TestSharing: rows sharing k leading ids share exactly k·B tokens and
// differ at token k·B, for every k, with a partial last block.
func TestSharing(t *testing.T) {
	for _, spec := range []string{"builtin", "../tokenizer/testdata/llama3-style", "../tokenizer/testdata/llama2-style"} {
		t.Run(spec, func(t *testing.T) {
			tok := mustLoad(t, spec)
			s := mustBuilder(t, tok, fidelityConfig())
			const B = 16
			base := build(t, s, row(0, 5*B-3, B, 1, 2, 3, 4, 5))
			for k := 0; k <= 4; k++ {
				ids := []uint64{1, 2, 3, 4, 5}[:k]
				for j := k; j < 5; j++ {
					ids = append(ids, uint64(100*(k+1)+j))
				}
				p := build(t, s, row(int64(k+1), 5*B-3, B, ids...))
				if got := commonPrefix(base.TokenIDs, p.TokenIDs); got != k*B {
					t.Errorf("k=%d: %d shared tokens, want %d", k, got, k*B)
				}
				if n := tok.Count(p.Text); n != 5*B-3 {
					t.Errorf("k=%d: %d tokens, want %d", k, n, 5*B-3)
				}
				if p.ExpectedCachedTokens != k*B {
					t.Errorf("k=%d: expected cached %d, want %d", k, p.ExpectedCachedTokens, k*B)
				}
			}
			// The partial last block is a prefix of the full block of the
			// same id, cached under its own size.
			full := build(t, s, row(9, 5*B, B, 1, 2, 3, 4, 5))
			if got := commonPrefix(base.TokenIDs, full.TokenIDs); got != 5*B-3 {
				t.Errorf("partial vs full last block: %d shared tokens, want %d", got, 5*B-3)
			}
			if full.ExpectedCachedTokens != 5*B {
				t.Errorf("expected cached %d, want %d", full.ExpectedCachedTokens, 5*B)
			}
		})
	}
}

func TestSeed(t *testing.T) {
	tok := mustLoad(t, "builtin")
	cfg := fidelityConfig()
	a := build(t, mustBuilder(t, tok, cfg), row(0, 100, 16, 1, 2, 3, 4, 5, 6, 7))
	b := build(t, mustBuilder(t, tok, cfg), row(0, 100, 16, 1, 2, 3, 4, 5, 6, 7))
	cfg.Seed++
	c := build(t, mustBuilder(t, tok, cfg), row(0, 100, 16, 1, 2, 3, 4, 5, 6, 7))
	if a.Text != b.Text {
		t.Error("same seed, different prompts")
	}
	if commonPrefix(a.TokenIDs, c.TokenIDs) != 0 {
		t.Error("different seeds share a prefix")
	}
}

func TestHashMismatch(t *testing.T) {
	tok := mustLoad(t, "builtin")
	s := mustBuilder(t, tok, fidelityConfig())
	// 3 ids of 16 tokens hold 33..48 tokens.
	for _, L := range []int{32, 49} {
		var p Prompt
		r := row(7, L, 16, 1, 2, 3)
		err := s.Build(&r, &p)
		var me *HashMismatchError
		if !errors.As(err, &me) || me.Index != 7 || me.Line != 8 || me.InputTokens != L {
			t.Fatalf("L=%d: err = %v, want a HashMismatchError for row 7", L, err)
		}
		if !strings.Contains(err.Error(), "row 7 (line 8)") || !strings.Contains(err.Error(), "33..48") {
			t.Errorf("message %q lacks the row position or the valid range", err)
		}
	}
	cfg := fidelityConfig()
	cfg.Mismatch = MismatchFit
	s = mustBuilder(t, tok, cfg)
	ref := build(t, s, row(0, 48, 16, 1, 2, 3))
	long := build(t, s, row(1, 60, 16, 1, 2, 3))  // 12 fresh tokens after the ids
	short := build(t, s, row(2, 20, 16, 1, 2, 3)) // ids cut to 2
	if !long.Fitted || !short.Fitted || ref.Fitted {
		t.Errorf("Fitted = %v %v %v, want false true true", ref.Fitted, long.Fitted, short.Fitted)
	}
	if got := commonPrefix(ref.TokenIDs, long.TokenIDs); got != 48 {
		t.Errorf("long row shares %d tokens, want 48", got)
	}
	if got := commonPrefix(ref.TokenIDs, short.TokenIDs); got != 20 {
		t.Errorf("short row shares %d tokens, want 20", got)
	}
	for _, p := range []Prompt{long, short} {
		if n := tok.Count(p.Text); n != p.TraceTokens {
			t.Errorf("fitted prompt is %d tokens, want %d", n, p.TraceTokens)
		}
	}
	if st := s.Stats(); st.Fitted != 2 {
		t.Errorf("Stats.Fitted = %d, want 2", st.Fitted)
	}
}

// TestPrepare: Prepare reports every bad row at once, and after it Build
// gives the same prompts and expectations in any order.
func TestPrepare(t *testing.T) {
	tok := mustLoad(t, "builtin")
	s := mustBuilder(t, tok, fidelityConfig())
	rows := []trace.Row{row(0, 32, 16, 1, 2), row(1, 100, 16, 1), row(2, 0, 16), row(3, 40, 16, 1, 2, 9)}
	err := s.Prepare(rows)
	for _, want := range []string{"row 1 (line 2)", "row 2 (line 3)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Prepare error %v does not report %s", err, want)
		}
	}
	good := bailianSample(300, 20, 3)
	inOrder := mustBuilder(t, tok, fidelityConfig())
	if err := inOrder.Prepare(good); err != nil {
		t.Fatal(err)
	}
	shuffled := mustBuilder(t, tok, fidelityConfig())
	if err := shuffled.Prepare(good); err != nil {
		t.Fatal(err)
	}
	perm := rand.New(rand.NewPCG(1, 1)).Perm(len(good))
	got := make([]Prompt, len(good))
	for _, i := range perm {
		got[i] = build(t, shuffled, good[i])
	}
	for i := range good {
		want := build(t, inOrder, good[i])
		if want.Text != got[i].Text || want.ExpectedCachedTokens != got[i].ExpectedCachedTokens {
			t.Fatalf("row %d differs when built out of order", i)
		}
	}
}

// TestConcurrentBuild hammers one prepared Builder from several goroutines
// (with a small cache, so blocks are evicted and rebuilt concurrently) and
// checks every prompt against a single-goroutine build.
func TestConcurrentBuild(t *testing.T) {
	tok := mustLoad(t, "builtin")
	rows := bailianSample(400, 30, 5)
	ref := mustBuilder(t, tok, fidelityConfig())
	if err := ref.Prepare(rows); err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(rows))
	for i := range rows {
		want[i] = build(t, ref, rows[i]).Text
	}
	cfg := fidelityConfig()
	cfg.BlockCacheBytes = 1 << 20
	s := mustBuilder(t, tok, cfg)
	if err := s.Prepare(rows); err != nil {
		t.Fatal(err)
	}
	const P = 4
	var wg sync.WaitGroup
	errs := make(chan error, P)
	start := make(chan struct{})
	for g := range P {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var p Prompt
			for n := range 3 * len(rows) {
				i := (n*7 + g*13) % len(rows)
				if err := s.Build(&rows[i], &p); err != nil {
					errs <- err
					return
				}
				if p.Text != want[i] {
					errs <- fmt.Errorf("goroutine %d: row %d differs", g, i)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := s.Stats(); st.Evictions == 0 || st.BlockBytes > cfg.BlockCacheBytes+64<<10 {
		t.Errorf("cache: %d evictions, %d bytes held (limit %d)", st.Evictions, st.BlockBytes, cfg.BlockCacheBytes)
	}
}

func TestISLCorrection(t *testing.T) {
	tok := mustLoad(t, "builtin")
	plain := mustBuilder(t, tok, fidelityConfig())
	cfg := fidelityConfig()
	cfg.ISLCorrection = 20
	corr := mustBuilder(t, tok, cfg)
	r := row(0, 100, 16, 1, 2, 3, 4, 5, 6, 7)
	a, b := build(t, plain, r), build(t, corr, r)
	if b.Tokens != 80 || tok.Count(b.Text) != 80 || b.TraceTokens != 100 {
		t.Errorf("corrected: Tokens %d, counted %d, trace %d; want 80, 80, 100", b.Tokens, tok.Count(b.Text), b.TraceTokens)
	}
	if commonPrefix(a.TokenIDs, b.TokenIDs) != 80 {
		t.Error("correction changed the prefix")
	}
	if b.ExpectedCachedTokens != a.ExpectedCachedTokens {
		t.Error("correction changed the trace-side expectation")
	}
	tiny := build(t, corr, row(1, 5, 16, 9))
	if tiny.Tokens != 1 || corr.Stats().Clamped != 1 {
		t.Errorf("5-token row with correction 20: %d tokens, %d clamped; want 1, 1", tiny.Tokens, corr.Stats().Clamped)
	}
}

func TestFreshPrompts(t *testing.T) {
	tok := mustLoad(t, "builtin")
	s := mustBuilder(t, tok, fidelityConfig())
	a := build(t, s, row(0, 300, 0))
	b := build(t, s, row(0, 300, 0)) // even the same row: no sharing
	if a.Tokens != 300 || tok.Count(a.Text) != 300 || tok.Count(b.Text) != 300 {
		t.Errorf("fresh prompts: %d, %d, %d tokens; want 300", a.Tokens, tok.Count(a.Text), tok.Count(b.Text))
	}
	if commonPrefix(a.TokenIDs, b.TokenIDs) > 1 {
		t.Errorf("fresh prompts share %d tokens", commonPrefix(a.TokenIDs, b.TokenIDs))
	}
	if a.ExpectedCachedTokens != 0 {
		t.Errorf("fresh prompt expects %d cached tokens", a.ExpectedCachedTokens)
	}
	var p Prompt
	r := row(3, 0, 0)
	if err := s.Build(&r, &p); !errors.Is(err, ErrNoLength) {
		t.Errorf("zero-length row: err = %v, want ErrNoLength", err)
	}
}

func TestOwnContent(t *testing.T) {
	tok := mustLoad(t, "builtin")
	s := mustBuilder(t, tok, fidelityConfig())
	tests := []struct {
		raw      string
		text     string
		tokens   int
		synth    bool
		inputLen int
	}{
		{`{"text_input":"hello world"}`, "hello world", 2, false, 0},
		{`{"messages":[{"role":"user","content":"hello world"},{"role":"user","content":[{"type":"text","text":"hello"}]}]}`, "", 3, false, 0},
		{`{"payload":{"model":"m","prompt":"x"}}`, "", -1, false, 0},
		{`{"extra":{"temperature":0}}`, "", 40, true, 40}, // extra only: synthesized
	}
	for _, tt := range tests {
		r := row(0, tt.inputLen, 0)
		r.Raw = json.RawMessage(tt.raw)
		var p Prompt
		if err := s.Build(&r, &p); err != nil {
			t.Fatalf("%s: %v", tt.raw, err)
		}
		if p.Synthesized != tt.synth || p.Tokens != tt.tokens || (!tt.synth && p.Text != tt.text) {
			t.Errorf("%s: synthesized %v, tokens %d, text %q; want %v, %d, %q", tt.raw, p.Synthesized, p.Tokens, p.Text, tt.synth, tt.tokens, tt.text)
		}
	}
	r := row(0, 10, 0)
	r.Raw = json.RawMessage(`{"text_input":`)
	var p Prompt
	if err := s.Build(&r, &p); err == nil {
		t.Error("broken row content accepted")
	}
}

// TestSession follows AIPerf's deltas_without_responses: each turn sends
// the earlier prompts and responses, then its own new tokens.
func TestSession(t *testing.T) {
	for _, spec := range []string{"builtin", "../tokenizer/testdata/llama2-style"} {
		t.Run(spec, func(t *testing.T) {
			tok := mustLoad(t, spec)
			s := mustBuilder(t, tok, fidelityConfig())
			ss := s.NewSession()
			p1 := build(t, s, row(0, 30, 0))
			if got := ss.Text(&p1); got != p1.Text {
				t.Errorf("first turn text %q, want the prompt", got)
			}
			ss.Record(&p1, "Sure, here it is.")
			p2 := build(t, s, row(1, 20, 0))
			msgs := ss.Messages(&p2)
			want := []Message{{"user", p1.Text}, {"assistant", "Sure, here it is."}, {"user", p2.Text}}
			if d := cmp.Diff(want, msgs); d != "" {
				t.Errorf("messages (-want +got):\n%s", d)
			}
			text := ss.Text(&p2)
			if !strings.HasPrefix(text, p1.Text+"Sure, here it is.") || !strings.HasSuffix(text, p2.Text) {
				t.Errorf("completions text %q", text)
			}
			if ss.HistoryTokens() != 30+tok.Count("Sure, here it is.") || ss.Turns() != 1 {
				t.Errorf("history %d tokens, %d turns", ss.HistoryTokens(), ss.Turns())
			}
			// The first prompt (30 tokens) is the next one's prefix: one
			// full 16-token block of it is cached for sure.
			if got := ss.ExpectedCachedTokens(16); got != 16 {
				t.Errorf("expected cached tokens %d, want 16", got)
			}
			if got := s.NewSession().ExpectedCachedTokens(16); got != 0 {
				t.Errorf("expected cached tokens of an empty session %d, want 0", got)
			}
			ids := ss.TokenIDs(&p2)
			if len(ids) != ss.HistoryTokens()+20 {
				t.Errorf("%d ids, want %d", len(ids), ss.HistoryTokens()+20)
			}
			if spec == "builtin" {
				// Byte-level: the flattened text tokenizes to the ids.
				if d := cmp.Diff(tok.Encode(text), ids); d != "" {
					t.Errorf("ids differ from the text's tokens:\n%s", d)
				}
			}
		})
	}
}

func TestNoVocabulary(t *testing.T) {
	if _, err := New(opaque{mustLoad(t, "builtin")}, NewConfig()); err == nil {
		t.Error("a tokenizer without Vocabulary was accepted")
	}
}

// opaque hides the tokenizer's Vocabulary methods.
type opaque struct{ tokenizer.Tokenizer }

// TestWords: Words is exactly n tokens alone under each tokenizer (the
// llama2-style one a SentencePiece tokenizer: its leading space dropped),
// equal keys give equal texts whatever was built between, and distinct
// keys texts that differ from their first token on.
func TestWords(t *testing.T) {
	for _, spec := range []string{"builtin", "../tokenizer/testdata/llama3-style", "../tokenizer/testdata/llama2-style"} {
		t.Run(spec, func(t *testing.T) {
			tok := mustLoad(t, spec)
			s := mustBuilder(t, tok, fidelityConfig())
			a := s.Words(1, 64)
			build(t, s, row(0, 40, 16, 7, 8, 9))
			if again := s.Words(1, 64); again != a {
				t.Errorf("key 1 gave another text the second time")
			}
			if n := tok.Count(a); n != 64 {
				t.Errorf("Words(1, 64) is %d tokens, want 64", n)
			}
			ta, tb := tok.Encode(a), tok.Encode(s.Words(2, 64))
			if len(ta) == 0 || len(tb) == 0 || ta[0] == tb[0] {
				t.Errorf("keys 1 and 2 begin with the same token")
			}
			if s.Words(3, 0) != "" {
				t.Error("Words(3, 0) is not empty")
			}
		})
	}
}
