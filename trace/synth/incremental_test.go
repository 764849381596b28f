package synth

import (
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// TestIncrementalContexts: a cumulative session (block 4, 10 output
// tokens per turn) becomes AIPerf-style turns of new tokens with the
// context's fresh tail ids, and Contexts rebuilds contexts with the same
// lengths and the same sharing (ids equal where the originals are equal).
func TestIncrementalContexts(t *testing.T) {
	ctx := []trace.Row{
		inSession(row(0, 6, 1, 2), "x", 0), // 6 tokens
		row(1, 5, 1, 99),                   // independent
		delayed(inSession(row(0, 6+10+3, 1, 3, 4, 5, 6), "x", 1), 5),                    // keeps 1 full block: 19 tokens, 5 ids
		delayed(inSession(row(0, 19+10+9, 1, 3, 4, 5, 7, 8, 9, 10, 11, 12), "x", 2), 5), // keeps 4 full blocks
	}
	for _, i := range []int{0, 2, 3} {
		ctx[i].Cumulative = true
	}
	inc, err := Incremental(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type li struct {
		L   int
		IDs []uint64
		C   bool
	}
	var got []li
	for _, r := range inc {
		got = append(got, li{r.InputTokens, r.HashIDs, r.Cumulative})
	}
	want := []li{{6, []uint64{1, 2}, false}, {5, []uint64{1, 99}, false}, {3, []uint64{6}, false}, {9, []uint64{10, 11, 12}, false}}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("incremental (-want +got):\n%s", d)
	}
	back := Contexts(inc)
	for i := range ctx {
		if back[i].InputTokens != ctx[i].InputTokens || len(back[i].HashIDs) != len(ctx[i].HashIDs) {
			t.Fatalf("row %d: context %d tokens %d ids, want %d and %d", i, back[i].InputTokens, len(back[i].HashIDs), ctx[i].InputTokens, len(ctx[i].HashIDs))
		}
	}
	// Same sharing: the analyzer sees the same statistics.
	a, b := Measure(ctx, 4, []int64{}), Measure(back, 4, []int64{})
	if a.Cache.HitTokens != b.Cache.HitTokens || a.Cache.DistinctBlocks != b.Cache.DistinctBlocks || a.Cache.InputTokens != b.Cache.InputTokens {
		t.Errorf("contexts differ: hit %d/%d blocks %d/%d input %d/%d", a.Cache.HitTokens, b.Cache.HitTokens,
			a.Cache.DistinctBlocks, b.Cache.DistinctBlocks, a.Cache.InputTokens, b.Cache.InputTokens)
	}
}

// TestIncrementalRefuses: a cumulative session whose context does not
// grow by the previous prompt and output (a real Bailian conversation)
// cannot be written as Mooncake; Derive says to write Bailian.
func TestIncrementalRefuses(t *testing.T) {
	rows := []trace.Row{
		inSession(row(0, 40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), "x", 0),
		inSession(row(10, 45, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), "x", 1), // 45 < 40 + 10 + 1
	}
	rows[0].Cumulative, rows[1].Cumulative = true, true
	cfg := NewDeriveConfig()
	cfg.Format = trace.FormatMooncake
	_, err := Derive(rows, cfg)
	wantErr(t, err, "session \"x\", turn 1", "--output-format bailian")
	cfg.Format = trace.FormatBailian
	if _, err := Derive(rows, cfg); err != nil {
		t.Errorf("bailian output: %v", err)
	}
}

// TestIncrementalNothingCumulative: rows without a cumulative session come
// back as they are, without a copy (a derive of a plain Mooncake trace
// holds its rows once).
func TestIncrementalNothingCumulative(t *testing.T) {
	rows := []trace.Row{{Line: 1, InputTokens: 10, SessionID: "a"}, {Line: 2, InputTokens: 20, SessionID: "a", Turn: 1}}
	got, err := Incremental(rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) || &got[0] != &rows[0] {
		t.Errorf("got %d rows at %p, want the input's %d at %p", len(got), &got[0], len(rows), &rows[0])
	}
}
