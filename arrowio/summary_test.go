package arrowio

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// TestSummaryJSONLayout: with no report summary.json is the summary's own
// bytes; a report is added as one more key without changing the bytes of
// the others.
func TestSummaryJSONLayout(t *testing.T) {
	reqs := genRequests(20, 1)
	reqs[3].ErrorKind, reqs[3].ErrorMessage, reqs[3].StatusCode = record.ErrHTTPStatus, "HTTP 500", 500
	s := summary.Summarize(reqs, summary.RunInfo{Model: "m <&>", Mode: "x", Start: time.Unix(1, 0).UTC()}, summary.Options{Streaming: true})
	js, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	got, err := SummaryJSON(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(js), string(got)); diff != "" {
		t.Errorf("no report (-summary +SummaryJSON):\n%s", diff)
	}
	got, err = SummaryJSON(s, &WriterReport{Waits: 2, WaitNS: 5, MaxQueuedBatches: 9})
	if err != nil {
		t.Fatal(err)
	}
	// record_writer sorts between "output_…" and "request_…"; every other
	// line is the summary's.
	want := strings.Replace(string(js), "\n  \"request_count\"",
		"\n  \"record_writer\": {\n    \"waits\": 2,\n    \"wait_ns\": 5,\n    \"dropped\": 0,\n    \"max_queued_batches\": 9\n  },\n  \"request_count\"", 1)
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("with a report (-want +got):\n%s", diff)
	}
}
