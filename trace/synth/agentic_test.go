package synth

import (
	"bytes"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// TestGenerateAgentic writes tasks of fan-out 4 and depth 3 with fixed
// think and tool times and two shared system prompts, reads the file
// back as a trace, and checks the analyzer's dependencies section: every
// task has 21 requests on 3 levels, every request with children has 4,
// the think and tool times are the asked ones, and the prefix reuse in
// dependency order is what the trees imply; roots share only their
// system prompt's blocks.
func TestGenerateAgentic(t *testing.T) {
	cfg := NewAgenticConfig()
	cfg.BlockSize = 16
	cfg.Tasks, cfg.Rate = 5, 10
	cfg.FanOut, cfg.Depth = 4, 3
	cfg.ThinkTime, cfg.ToolTime = 2*time.Millisecond, 5*time.Millisecond
	cfg.SystemPrompts, cfg.SystemPromptTokens = 2, 64
	cfg.ISL, cfg.OSL = Fixed(40), Fixed(8)
	res, err := GenerateAgentic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, res); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader("agentic.jsonl", &buf, trace.Options{BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	var rows []trace.Row
	for {
		var row trace.Row
		if err := r.Next(&row); err != nil {
			if err.Error() != "EOF" {
				t.Fatal(err)
			}
			break
		}
		rows = append(rows, row.Clone())
	}
	d := analyze.Rows(rows, analyze.Config{BlockSize: 16}).Dependencies
	if d == nil {
		t.Fatal("no dependencies section")
	}
	if d.Tasks != 5 || d.DependentRows != 5*20 || d.Depth.Min != 3 || d.Depth.Max != 3 || d.TaskSize.Min != 21 || d.TaskSize.Max != 21 {
		t.Errorf("tasks %d dependent %d depth %+v size %+v; want 5 tasks of 21 requests, 3 levels", d.Tasks, d.DependentRows, d.Depth, d.TaskSize)
	}
	if d.FanOut.Count != 5*5 || d.FanOut.Min != 4 || d.FanOut.Max != 4 || d.FanIn.Max != 1 {
		t.Errorf("fan-out %+v fan-in %+v; want 4 from each of 5 requests per task", d.FanOut, d.FanIn)
	}
	if d.ThinkTime.Min != 0.002 || d.ThinkTime.Max != 0.002 || d.ToolTime.Min != 0.005 || d.ToolTime.Max != 0.005 || d.CriticalPathWait.Min != 0.014 {
		t.Errorf("think %+v tool %+v critical wait %+v; want 2 ms, 5 ms and 2 × 7 ms", d.ThinkTime, d.ToolTime, d.CriticalPathWait)
	}
	// A root has 64 + 40 = 104 tokens (6 full blocks); a level-1 child
	// 96 + 40 = 136 (8 full blocks), reusing its parent's 96; a level-2
	// child 128 + 40, reusing its parent's 128.
	wantHit := int64(5 * (4*96 + 16*128))
	if d.AncestorHitTokens != wantHit {
		t.Errorf("ancestor hit tokens %d, want %d", d.AncestorHitTokens, wantHit)
	}
	sys := map[uint64]bool{}
	for _, row := range rows {
		if row.WaitFor == nil {
			sys[row.HashIDs[0]] = true
		}
	}
	if len(sys) != 2 {
		t.Errorf("roots start with %d distinct system prompts, want 2", len(sys))
	}
	cfg.FanOut = 0
	if _, err := GenerateAgentic(cfg); err == nil {
		t.Error("fan-out 0 accepted")
	}
}
