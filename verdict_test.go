package reprise

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// TestVerdicts: every failed check is listed, in the documented order of
// precedence with its numbers: nothing succeeded comes first, before
// lateness, the error rate and goodput; an interrupted run is judged no
// further.
func TestVerdicts(t *testing.T) {
	o := NewOptions()
	goodput := summary.Options{Goodput: []summary.SLO{{Tag: "ttft", Value: 1}}}
	late := replay.Stats{LatenessBudgetExceeded: true, MaxLateness: time.Millisecond,
		Lateness: replay.Percentiles{P99: 2 * time.Millisecond}, Late: 3, Dispatched: 3}
	allFailed := Verdict{Kind: AllFailed, Failed: 3, Requests: 3, Example: "http: 503"}
	allErrors := Verdict{Kind: ErrorRateExceeded, Value: 1, Limit: DefaultMaxErrorRate, Failed: 3, Requests: 3}
	tests := []struct {
		name        string
		s           summary.Summary
		st          replay.Stats
		interrupted bool
		want        []Verdict
	}{
		{"passed", summary.Summary{RequestCount: 100, ErrorRequestCount: 5}, replay.Stats{}, false, nil},
		{"error rate", summary.Summary{RequestCount: 90, ErrorRequestCount: 10}, replay.Stats{}, false,
			[]Verdict{{Kind: ErrorRateExceeded, Value: 0.1, Limit: DefaultMaxErrorRate, Failed: 10, Requests: 100}}},
		{"all failed", summary.Summary{ErrorRequestCount: 3, Errors: []summary.ErrorCount{{Kind: "http", Message: "503"}}},
			replay.Stats{}, false, []Verdict{allFailed, allErrors}},
		// The run: every request failed, late, with goodput SLOs.
		{"all failed, late, goodput", summary.Summary{ErrorRequestCount: 3, Errors: []summary.ErrorCount{{Kind: "http", Message: "503"}},
			Options: goodput}, late, false, []Verdict{allFailed, {Kind: LatenessOverBudget, Value: 0.002, Limit: 0.001, Failed: 3, Requests: 3},
			allErrors, {Kind: SLOFailed, Value: 0, Limit: DefaultMinGoodFraction}}},
		{"goodput", summary.Summary{RequestCount: 10, GoodRequestFraction: 0.5, Options: goodput}, replay.Stats{}, false,
			[]Verdict{{Kind: SLOFailed, Value: 0.5, Limit: DefaultMinGoodFraction}}},
		{"interrupted", summary.Summary{ErrorRequestCount: 3}, late, true, []Verdict{{Kind: Interrupted}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdicts(&o, &tt.s, &tt.st, tt.interrupted, false)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}
