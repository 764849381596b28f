package prompt

import (
	"errors"
	"slices"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// TestPrepareFreesWalkState: after Prepare, prompts and expectations are
// those of an unprepared Synth that built the rows in arrival order (the
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
			oracle := mustSynth(t, tok, cfg)
			want := make([]Prompt, len(c.rows))
			for i := range c.rows {
				want[i] = build(t, oracle, c.rows[i])
			}
			s := mustSynth(t, tok, cfg)
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
			if (e.dense != nil) != c.dense {
				t.Fatalf("dense %v, want %v", e.dense != nil, c.dense)
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
