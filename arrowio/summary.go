package arrowio

import (
	"encoding/json"
	"fmt"

	"github.com/reprise-bench/reprise/engine/summary"
)

// RecordWriterKey is the summary.json key of a [WriterReport].
const RecordWriterKey = "record_writer"

// WriterReport is summary.json's record_writer (docs/format/summary.md):
// how the record writer kept up with the run, a fact the record files
// cannot tell, so `reprise summarize` copies it from the run's
// summary.json into the summary it recomputes.
type WriterReport struct {
	// Waits, WaitNS and MaxQueuedBatches describe the queue in front of
	// the writer, the run's collector queue (package reprise): hand-overs that
	// waited for queue space, the total time they waited, and the most
	// batches queued at once.
	Waits   int64 `json:"waits"`
	WaitNS  int64 `json:"wait_ns"`
	Dropped int64 `json:"dropped"` // rows missing from the record files: DroppedRecords + DroppedEvents
	// DroppedRecords and DroppedEvents are Dropped by table: the records
	// (one per request) and the events missing from their files.
	DroppedRecords   int64 `json:"dropped_records,omitempty"`
	DroppedEvents    int64 `json:"dropped_events,omitempty"`
	MaxQueuedBatches int64 `json:"max_queued_batches"`
	// Error is the writer's first error (a full disk: it names the table
	// and the file); the rows after it are missing. Empty when none.
	Error string `json:"error,omitempty"`
}

// Report returns the writer's part of its report, the rows dropped (by
// table) and the first error; the caller adds the queue's counters. Call it after
// Close for the final numbers.
func (w *RunWriter) Report() *WriterReport {
	st := w.Stats()
	r := &WriterReport{Dropped: st.RequestsDropped + st.EventsDropped, DroppedRecords: st.RequestsDropped, DroppedEvents: st.EventsDropped}
	if err := w.Err(); err != nil {
		r.Error = err.Error()
	}
	return r
}

// SummaryJSON returns the bytes of summary.json: s as [summary.Summary.JSON]
// lays it out (keys sorted, two spaces of indent, a final newline), with w
// under [RecordWriterKey] when w is not nil. `reprise summarize` prints
// the same bytes for the same summary and report.
func SummaryJSON(s *summary.Summary, w *WriterReport) ([]byte, error) {
	js, err := s.JSON()
	if err != nil || w == nil {
		return js, err
	}
	return withKeys(js, map[string]any{RecordWriterKey: w})
}

// withKeys returns the JSON object js with extra top-level keys added,
// laid out as summary.Summary.JSON lays it out, so the keys js had keep
// their bytes.
func withKeys(js []byte, extra map[string]any) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	for k, v := range extra {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("summary.json %s: %w", k, err)
		}
		m[k] = b
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	return append(b, '\n'), nil
}

// Missing says what the report's dropped rows are, by table: "365
// records and 4015 events", or "12 rows" for a report that does not say
// (one written before the tables were counted apart).
func (w *WriterReport) Missing() string {
	if w.DroppedRecords+w.DroppedEvents != w.Dropped {
		return plural(w.Dropped, "row")
	}
	s := plural(w.DroppedRecords, "record")
	if w.DroppedEvents > 0 {
		s += " and " + plural(w.DroppedEvents, "event")
	}
	return s
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
