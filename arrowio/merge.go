package arrowio

import (
	"github.com/reprise-bench/reprise/engine/summary"
)

// MergeKey is the summary.json key of a merged run's [MergeReport].
const MergeKey = "merge"

// MergeReport is summary.json's "merge" (docs/format/summary.md): what a
// run directory merged from the run directories of several shards
// (`reprise merge`) was made of, shard by shard, and whether it is whole.
// Like the record writer's report it is a fact of the merge that the
// record files cannot tell, so `reprise summarize` copies it from
// summary.json.
type MergeReport struct {
	// ShardCount is the N of the shards' --shard I/N; 0 when the parts
	// were not shards of one run.
	ShardCount int `json:"shard_count"`
	// Shards describes each merged directory, in the order merged.
	Shards []ShardReport `json:"shards"`
	// MissingShards lists the indices of 0..ShardCount-1 no directory
	// held.
	MissingShards []int `json:"missing_shards"`
	// DuplicateRows counts records of a trace row already sent, when every
	// row was to be sent once (the plans did not wrap the trace); -1 when
	// that was not checked. DuplicateRowExamples lists the first few.
	DuplicateRows        int64   `json:"duplicate_rows"`
	DuplicateRowExamples []int64 `json:"duplicate_row_examples,omitempty"`
	// MissingRequests is the planned requests (all shards, warmup
	// included) that have no record; -1 when a plan was bounded by time
	// only.
	MissingRequests int64 `json:"missing_requests"`
	// Problems says, one sentence each, what makes the merge incomplete: a
	// missing or failed shard, duplicate or missing rows, shards of
	// different runs. Empty when the merge is whole.
	Problems []string `json:"problems"`
}

// ShardReport is one merged directory of a [MergeReport].
type ShardReport struct {
	// Dir is the directory as given.
	Dir string `json:"dir"`
	// Index and Count are its --shard I/N; -1 and 0 when it is not a
	// shard.
	Index int `json:"index"`
	Count int `json:"count"`
	// RequestIDOffset was added to its request ids (and its events'), so
	// ids stay unique in the merged run: the shard's records are those
	// with ids from RequestIDOffset to RequestIDOffset+Requests-1 at
	// most.
	RequestIDOffset uint64 `json:"request_id_offset"`
	// Requests is its records (warmup included); PlannedRequests what its
	// plan meant to send, warmup included (-1 when only time bounded it).
	Requests        int64 `json:"requests"`
	PlannedRequests int   `json:"planned_requests"`
	// OK, Errors and Warmup count its measured requests that succeeded
	// and failed, and its warmup requests; ErrorsByKind the failures by
	// kind.
	OK           int            `json:"ok"`
	Errors       int            `json:"errors"`
	Warmup       int            `json:"warmup"`
	ErrorsByKind map[string]int `json:"errors_by_kind"`
	// LateCount counts its measured requests later than the late
	// threshold; Lateness is their schedule_lateness statistics (ms), nil
	// when it sent none.
	LateCount int            `json:"late_count"`
	Lateness  *summary.Stats `json:"schedule_lateness"`
	// Completed reports that the shard's run wrote its summary.json and
	// was not interrupted; a crashed, killed or interrupted shard is not
	// completed.
	Completed bool `json:"completed"`
	// RecordWriter is the shard's summary.json record_writer, nil when
	// absent.
	RecordWriter *WriterReport `json:"record_writer,omitempty"`
}

// SummaryJSONMerged returns summary.json's bytes for a merged run: as
// [SummaryJSON] lays out s and w, with m under [MergeKey] when not nil.
func SummaryJSONMerged(s *summary.Summary, w *WriterReport, m *MergeReport) ([]byte, error) {
	if m == nil {
		return SummaryJSON(s, w)
	}
	js, err := s.JSON()
	if err != nil {
		return nil, err
	}
	extra := map[string]any{MergeKey: m}
	if w != nil {
		extra[RecordWriterKey] = w
	}
	return withKeys(js, extra)
}
