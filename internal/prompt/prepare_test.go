package prompt

import (
	"errors"
	"slices"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// TestPrepareFreesWalkState: after Prepare, prompts and expectations are
// those of an unprepared Builder that built the rows in arrival order (the
// oracle), although Prepare dropped its per-id maps and prefix-cache
// models and keeps only the first words that moved off their preference.
func TestPrepareFreesWalkState(t *testing.T) {
	tok := mustLoad(t, "builtin")
	cases := []struct {
		name string
		rows []trace.Row
	}{
		// Chained prefixes, many siblings per parent.
		{"bailian-shaped", bailianSample(600, 40, 7)},
		// 20,000 single-block roots: more siblings of the root than words,
		// so most first words collide and keep their preference.
		{"many roots", func() []trace.Row {
			rows := make([]trace.Row, 20_000)
			for i := range rows {
				rows[i] = row(int64(i), 20, 16, uint64(i)*7919+3, uint64(i)*7919+4)
			}
			return rows
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := fidelityConfig()
			cfg.ExpectedCacheTokens = 2000 // the LRU model too
			oracle := mustBuilder(t, tok, cfg)
			want := make([]Prompt, len(c.rows))
			for i := range c.rows {
				want[i] = build(t, oracle, c.rows[i])
			}
			s := mustBuilder(t, tok, cfg)
			if err := s.Prepare(c.rows); err != nil {
				t.Fatal(err)
			}
			if s.first != nil || s.used != nil || s.children != nil || len(s.models) != 0 {
				t.Fatalf("Prepare kept its walk state: %d ids, %d siblings, %d families, %d models",
					len(s.first), len(s.used), len(s.children), len(s.models))
			}
			ids := oracle.Stats().IDs
			if st := s.Stats(); st.IDs != ids || len(s.moved) >= ids {
				t.Fatalf("IDs %d (oracle %d), %d moved first words", st.IDs, ids, len(s.moved))
			}
			t.Logf("%d ids, %d moved first words", ids, len(s.moved))
			for i := len(c.rows) - 1; i >= 0; i-- { // out of order
				got := build(t, s, c.rows[i])
				w := &want[i]
				if got.Text != w.Text || !slices.Equal(got.TokenIDs, w.TokenIDs) ||
					got.ExpectedCachedTokens != w.ExpectedCachedTokens || got.ExpectedCachedTokensLRU != w.ExpectedCachedTokensLRU {
					t.Fatalf("row %d: prepared build differs from the in-order oracle (cached %d/%d, want %d/%d)", i,
						got.ExpectedCachedTokens, got.ExpectedCachedTokensLRU, w.ExpectedCachedTokens, w.ExpectedCachedTokensLRU)
				}
			}
			if len(s.models) != 0 {
				t.Error("building prepared rows rebuilt a prefix-cache model")
			}
			if err := s.Prepare(c.rows); !errors.Is(err, ErrPrepared) {
				t.Errorf("second Prepare: %v, want ErrPrepared", err)
			}
		})
	}
}

// TestExpectations: the dense table (by row index) and the sparse map
// agree, and neither reports rows it was not given.
func TestExpectations(t *testing.T) {
	cases := []struct {
		name  string
		idx   []int64
		dense bool
	}{
		{"every row", []int64{2, 0, 1, 3}, true},
		{"a few filtered out", []int64{0, 5, 9, 3}, true},
		// One kept row far into the source: a table of 10^9 would waste memory.
		{"far apart", []int64{0, 1_000_000_000}, false},
		{"negative index", []int64{-1, 0}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := make([]trace.Row, len(c.idx))
			for i, x := range c.idx {
				rows[i].Index = x
			}
			e := newExpectations(rows)
			if (e.sparse == nil) != c.dense {
				t.Fatalf("dense %v, want %v", e.sparse == nil, c.dense)
			}
			for i, x := range c.idx {
				e.set(x, expected{inf: int32(10 * i), lru: -1})
			}
			for i, x := range c.idx {
				if got, ok := e.get(x); !ok || got.inf != int32(10*i) || got.lru != -1 {
					t.Errorf("get(%d) = %+v, %v", x, got, ok)
				}
			}
			for _, x := range []int64{4, 7, 100, 2_000_000_000, -5} {
				if slices.Contains(c.idx, x) {
					continue
				}
				if got, ok := e.get(x); ok {
					t.Errorf("get(%d) = %+v for a row never set", x, got)
				}
			}
		})
	}
}

// TestPreparerMatchesPrepare: a Preparer given the rows one by one (the
// streaming first pass of a replay) leaves the Builder exactly as Prepare
// over the slice does: every prompt, token id and expectation equal, and
// the same row errors.
func TestPreparerMatchesPrepare(t *testing.T) {
	tok := mustLoad(t, "builtin")
	roots := make([]trace.Row, 3000)
	for i := range roots {
		roots[i] = row(int64(i), 20, 16, uint64(i)*7919+3, uint64(i)*7919+4)
	}
	// Indexes that jump far once: the expectation table turns into a map
	// in the middle of the walk.
	jump := bailianSample(300, 20, 3)
	for i := range jump {
		if i >= 150 {
			jump[i].Index += 10_000_000
		}
	}
	bad := bailianSample(200, 10, 5)
	bad[7].InputTokens, bad[90].InputTokens = 1, 0 // ids that do not fit; no length
	cases := []struct {
		name string
		rows []trace.Row
	}{
		{"bailian-shaped", bailianSample(600, 40, 7)},
		{"many roots", roots},
		{"index jump", jump},
		{"row errors", bad},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := fidelityConfig()
			cfg.ExpectedCacheTokens = 2000
			whole := mustBuilder(t, tok, cfg)
			wantErr := whole.Prepare(c.rows)
			if (wantErr != nil) != (c.name == "row errors") {
				t.Fatalf("Prepare: %v", wantErr)
			}
			s := mustBuilder(t, tok, cfg)
			pr, err := s.NewPreparer()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.NewPreparer(); !errors.Is(err, ErrPrepared) {
				t.Errorf("second NewPreparer during the walk: %v, want ErrPrepared", err)
			}
			for i := range c.rows {
				r := c.rows[i].Clone() // Add must not keep the row
				pr.Add(&r)
				r.HashIDs[0] = ^uint64(0)
			}
			gotErr := pr.Done()
			if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("Done: %v\nPrepare: %v", gotErr, wantErr)
			}
			if _, err := s.NewPreparer(); !errors.Is(err, ErrPrepared) {
				t.Errorf("NewPreparer after Done: %v, want ErrPrepared", err)
			}
			for i := range c.rows {
				var got, want Prompt
				errG, errW := s.Build(&c.rows[i], &got), whole.Build(&c.rows[i], &want)
				if (errG == nil) != (errW == nil) {
					t.Fatalf("row %d: Build %v, want %v", i, errG, errW)
				}
				if got.Text != want.Text || !slices.Equal(got.TokenIDs, want.TokenIDs) ||
					got.ExpectedCachedTokens != want.ExpectedCachedTokens || got.ExpectedCachedTokensLRU != want.ExpectedCachedTokensLRU {
					t.Fatalf("row %d: streamed walk builds a different prompt (cached %d/%d, want %d/%d)", i,
						got.ExpectedCachedTokens, got.ExpectedCachedTokensLRU, want.ExpectedCachedTokens, want.ExpectedCachedTokensLRU)
				}
			}
			if c.name == "index jump" && s.expected.sparse == nil {
				t.Error("the expectation table stayed dense over a 10^7 index jump")
			}
		})
	}
}
