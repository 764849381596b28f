package analyze

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// TestDependencies: the agentic Mooncake sample of the trace package —
// one task: a root, two workers waiting for it (fan-out 2), a join
// waiting for both (fan-in 2); three levels; the worst chain waits
// 40 + 850.5 ms then 40 + 850 ms; ancestors' prefixes reused.
func TestDependencies(t *testing.T) {
	rows, _, err := trace.ReadAll("../testdata/mooncake_agentic.jsonl", trace.Options{BlockSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	d := Rows(rows, Config{}).Dependencies
	if d == nil {
		t.Fatal("no dependencies section")
	}
	if d.Tasks != 1 || d.DependentRows != 3 || d.Depth.Max != 3 || d.TaskSize.Max != 4 || d.FanOut.Max != 2 || d.FanIn.Max != 2 {
		t.Errorf("graph: %+v", d)
	}
	if d.CriticalPathWait.Max != 1.7805 || d.ToolTime.Max != 0.8505 || d.ThinkTime.Max != 0.04 {
		t.Errorf("times: critical %+v tool %+v think %+v", d.CriticalPathWait, d.ToolTime, d.ThinkTime)
	}
	// Rows 2 and 3 reuse the root's 3 blocks (but row 3 has 140 tokens:
	// 140); the join reuses row 2's 4 blocks (256 of 390).
	if want := int64(3*64 + 140 + 4*64); d.AncestorHitTokens != want {
		t.Errorf("ancestor hits %d, want %d", d.AncestorHitTokens, want)
	}
	var b strings.Builder
	if err := WriteText(&b, Rows(rows, Config{})); err != nil || !strings.Contains(b.String(), "DEPENDENT REQUESTS") {
		t.Errorf("text: %v\n%s", err, b.String())
	}
	rep, err := File(t.Context(), "../testdata/mooncake_agentic.jsonl", FileConfig{Analyzer: Config{BlockSize: 64}})
	if err != nil || rep.Dependencies == nil || rep.Dependencies.AncestorHitTokens != d.AncestorHitTokens {
		t.Errorf("File: %v, %+v", err, rep.Dependencies)
	}
	plain, _, _ := trace.ReadAll("../testdata/mooncake40.jsonl", trace.Options{})
	if Rows(plain, Config{}).Dependencies != nil {
		t.Error("a trace without dependencies has a dependencies section")
	}
}
