package report

import (
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// TestCalibratedColumn: the calibration's error beside a run's latencies
// holds only for a run whose measurement quality is good; a degraded run's
// cell says so instead.
func TestCalibratedColumn(t *testing.T) {
	cal := &summary.Calibration{File: "cal.json", MaxErrorMS: 1, SafeLoad: summary.Load{Streams: 1e6, EventsPerSec: 1e9, RequestsPerSec: 1e9},
		Errors: map[string]summary.ErrorBar{"time_to_first_token": {P50: 0.01, P99: 0.25}}}
	mk := func(lateness int64) *runData {
		var rs []record.Request
		for i := range 10 {
			sent := int64(1e18) + int64(i)*1e8
			rs = append(rs, record.Request{RequestID: uint64(i), IntendedNS: sent - lateness, SentNS: sent, FirstTokenNS: sent + 1e7,
				LastTokenNS: sent + 2e7, EndNS: sent + 2e7, TTFTNS: 1e7, E2ENS: 2e7, LatenessNS: lateness, StatusCode: 200, OutputTokens: 2,
				ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1})
		}
		return &runData{label: "r", sum: summary.Summarize(rs, summary.RunInfo{}, summary.Options{Streaming: true, Calibration: cal})}
	}
	cell := func(d *runData) string {
		for _, row := range summarySection([]*runData{d}).Tables[1].Rows {
			if row[0].Text == "TTFT" {
				return row[len(row)-1].Text
			}
		}
		return "(no TTFT row)"
	}
	if got := cell(mk(0)); got != "±0.25" {
		t.Errorf("good run: %q, want ±0.25", got)
	}
	if got := cell(mk(5e6)); got != "does not hold: degraded run" { // 5 ms late: degraded
		t.Errorf("degraded run: %q, want the error marked as not holding", got)
	}
}
