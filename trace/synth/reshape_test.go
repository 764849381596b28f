package synth

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// TestReshapeMatchesDerive: on a Mooncake trace without cumulative
// sessions, Reshape gives Derive's rows for every per-row setting (the
// same code), and it leaves rows in place.
func TestReshapeMatchesDerive(t *testing.T) {
	rows := []trace.Row{
		{Index: 0, Line: 1, HasOffset: true, InputTokens: 1000, OutputTokens: 10, BlockSize: 512, HashIDs: []uint64{1, 2}, ParentID: -1, RequestID: -1},
		{Index: 1, Line: 2, HasOffset: true, Offset: 1e6, InputTokens: 1100, OutputTokens: 20, BlockSize: 512, HashIDs: []uint64{1, 2, 3}, ParentID: -1, RequestID: -1},
		{Index: 2, Line: 3, HasOffset: true, Offset: 2e6, InputTokens: 300, OutputTokens: 300, BlockSize: 512, HashIDs: []uint64{1}, ParentID: -1, RequestID: -1},
		{Index: 3, Line: 4, HasOffset: true, Offset: 3e6, InputTokens: 90, OutputTokens: 7, ParentID: -1, RequestID: -1},
	}
	for name, mut := range map[string]func(*DeriveConfig){
		"prefix 2":      func(c *DeriveConfig) { c.PrefixLenMultiplier = 2 },
		"prefix 0.5":    func(c *DeriveConfig) { c.PrefixLenMultiplier = 0.5 },
		"prompt 1.5":    func(c *DeriveConfig) { c.PromptLenMultiplier = 1.5 },
		"output 2, cap": func(c *DeriveConfig) { c.OutputLenMultiplier = 2; c.MaxOSL = 100 },
		"root 3":        func(c *DeriveConfig) { c.PrefixRootMultiplier = 3; c.Seed = 7 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := NewDeriveConfig()
			mut(&cfg)
			want, err := Derive(cloneRows(rows), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, st, err := Reshape(cloneRows(rows), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Rows, got); diff != "" {
				t.Errorf("Reshape differs from Derive (-derive +reshape):\n%s", diff)
			}
			if st.OSLCapped != want.Derive.OSLCapped || st.NewIDs != want.Derive.NewIDs {
				t.Errorf("stats %+v; Derive's %+v", st, want.Derive)
			}
		})
	}
}

// TestReshapeKeepsOwnContent: a row with its own text keeps its input
// length (AIPerf leaves text rows alone) while its output is scaled, and
// the speed-up is the replay's, not Reshape's.
func TestReshapeKeepsOwnContent(t *testing.T) {
	rows := []trace.Row{
		{HasOffset: true, Offset: 1e9, InputTokens: 40, OutputTokens: 10, Raw: json.RawMessage(`{"text_input":"hello"}`)},
		{HasOffset: true, Offset: 2e9, InputTokens: 40, OutputTokens: 10},
	}
	cfg := NewDeriveConfig()
	cfg.PromptLenMultiplier, cfg.OutputLenMultiplier, cfg.Speedup = 0.5, 3, 10
	got, _, err := Reshape(rows, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].InputTokens != 40 || got[1].InputTokens != 20 {
		t.Errorf("input tokens %d, %d; want 40 (own text) and 20", got[0].InputTokens, got[1].InputTokens)
	}
	if got[0].OutputTokens != 30 || got[1].OutputTokens != 30 {
		t.Errorf("output tokens %d, %d; want 30 each", got[0].OutputTokens, got[1].OutputTokens)
	}
	if got[0].Offset != 1e9 {
		t.Errorf("offset %v; want it unchanged (the replay's --speedup divides it)", got[0].Offset)
	}
}

// TestReshapeRejects: bad settings are ErrSettings errors naming the
// option.
func TestReshapeRejects(t *testing.T) {
	cfg := NewDeriveConfig()
	cfg.OutputLenMultiplier = -1
	if _, _, err := Reshape(nil, cfg); err == nil {
		t.Fatal("no error for a negative multiplier")
	}
}

func cloneRows(in []trace.Row) []trace.Row {
	out := make([]trace.Row, len(in))
	for i := range in {
		out[i] = in[i].Clone()
	}
	return out
}
