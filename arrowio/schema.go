package arrowio

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/reprise-bench/reprise/engine/record"
)

// Schema versions, stored under [SchemaKey] in every file's metadata. A
// change to a schema bumps its version and docs/format/records.md in the
// same commit. Readers accept the versions they know.
const (
	SchemaKey      = "reprise.schema"
	RecordsVersion = "records/v2.1"
	EventsVersion  = "events/v1"
)

// olderRecordsVersions are the earlier records versions readers accept:
// records/v1 is records/v2 without parent_request_ids, and records/v2 is
// records/v2.1 without the generation columns (media_items … job_polls),
// the accuracy_* columns and the media input columns (input_images …
// input_video_bytes).
var olderRecordsVersions = []string{"records/v1", "records/v2"}

// Table names: the file or directory name of each table in a run directory.
const (
	RecordsTable = "records"
	EventsTable  = "events"
)

// TimestampNS is the Arrow type of the *_at columns: timestamp[ns] without a
// time zone, holding UTC. With a zone DuckDB reads it as TIMESTAMPTZ and
// truncates to microseconds; without one it reads TIMESTAMP_NS, exact.
var TimestampNS arrow.DataType = &arrow.TimestampType{Unit: arrow.Nanosecond}

// enumType is the Arrow type of the closed-set string columns (phase,
// error_kind, kind): a dictionary with int8 indices and a fixed dictionary.
var enumType arrow.DataType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}

// phaseValues is the phase dictionary; the index is the record.Phase value.
var phaseValues = []string{record.PhaseProfile.String(), record.PhaseWarmup.String()}

// errorKindValues is the error_kind dictionary. Index 0 (success) is never
// referenced: success is null. A kind not in the list is written as
// "unknown" and counted (TestErrorKindsComplete keeps the list complete).
var errorKindValues = []string{
	string(record.ErrNone),
	string(record.ErrHTTPStatus),
	string(record.ErrConnect),
	string(record.ErrReset),
	string(record.ErrTimeout),
	string(record.ErrStreamError),
	string(record.ErrMalformed),
	string(record.ErrNoContent),
	string(record.ErrAdapter),
	string(record.ErrCancelled),
	string(record.ErrBuild),
	string(record.ErrNotDelivered),
	string(record.ErrTooLarge),
	string(record.ErrJobFailed),
	"unknown",
}

// eventKindValues is the event kind dictionary; the index is the
// record.EventKind value, and the last entry is for values out of range.
var eventKindValues = []string{
	record.EventIgnore.String(), record.EventContent.String(), record.EventReasoning.String(),
	record.EventToolCall.String(), record.EventUsage.String(), record.EventError.String(),
	record.EventFinish.String(), record.EventMeta.String(), "unknown",
}

// tokenSourceValues is the output_tokens_source dictionary; the index is
// the record.TokenSource value. Index 0 (unknown) is never referenced:
// unknown is null.
var tokenSourceValues = []string{
	record.TokensUnknown.String(), record.TokensServer.String(), record.TokensClient.String(), record.TokensEvents.String(),
}

// timeCols lists the Unix-ns columns of a request, in schema order, with
// the name of their timestamp[ns] twin ("" for none).
var timeCols = [...]struct{ ns, at string }{
	{"intended_ns", "intended_at"},
	{"dispatched_ns", "dispatched_at"},
	{"sent_ns", "sent_at"},
	{"wrote_ns", ""},
	{"headers_ns", ""},
	{"first_event_ns", ""},
	{"first_token_ns", "first_token_at"},
	{"first_output_token_ns", ""},
	{"second_token_ns", ""},
	{"last_token_ns", "last_token_at"},
	{"end_ns", "end_at"},
}

// CardinalityKey is a field metadata key: "high" marks a string column whose
// values are mostly distinct, which TableWriter then writes with plain
// Parquet encoding instead of dictionary encoding (cheaper to write).
const CardinalityKey = "reprise.cardinality"

// highCardinality marks f with CardinalityKey=high.
func highCardinality(f arrow.Field) arrow.Field {
	f.Metadata = arrow.NewMetadata([]string{CardinalityKey}, []string{"high"})
	return f
}

func nullable(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

func required(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t}
}

var (
	i32 = arrow.PrimitiveTypes.Int32
	i64 = arrow.PrimitiveTypes.Int64
	f64 = arrow.PrimitiveTypes.Float64
	str = arrow.BinaryTypes.String
)

// recordsFields is the records/v2.1 schema, in column order. The order of the
// builders in requestBuilder follows it exactly.
func recordsFields() []arrow.Field {
	fs := []arrow.Field{
		required("request_id", arrow.PrimitiveTypes.Uint64),
		nullable("trace_row", i64),
		highCardinality(nullable("session_id", str)),
		required("turn", i32),
		required("phase", enumType),
		required("sender_id", i32),
	}
	for _, c := range timeCols {
		fs = append(fs, nullable(c.ns, i64))
	}
	for _, c := range timeCols {
		if c.at != "" {
			fs = append(fs, nullable(c.at, TimestampNS))
		}
	}
	fs = append(fs,
		nullable("ttft_ns", i64),
		nullable("ttfo_ns", i64),
		nullable("ttst_ns", i64),
		nullable("itl_ns", f64),
		nullable("e2e_ns", i64),
		nullable("lateness_ns", i64),
		nullable("latency_from_intended_ns", i64),
		required("session_delay_ns", i64),

		required("input_tokens", i32),
		required("output_tokens", i32),
		required("reasoning_tokens", i32),
		nullable("max_tokens", i32),

		nullable("server_prompt_tokens", i32),
		nullable("server_completion_tokens", i32),
		nullable("server_reasoning_tokens", i32),
		nullable("server_cached_tokens", i32),
		nullable("expected_cached_tokens", i32),

		required("events", i32),
		required("content_events", i32),
		required("reads", i32),
		required("max_events_per_read", i32),
		required("bytes_received", i64),
		required("bytes_sent", i64),

		nullable("status_code", i32),
		nullable("error_kind", enumType),
		highCardinality(nullable("error_message", str)),
		nullable("finish_reason", str),

		required("conn_reused", arrow.FixedWidthTypes.Boolean),
		required("retries", i32),
		nullable("blocked_ns", i64),
		nullable("dns_ns", i64),
		nullable("connect_ns", i64),
		nullable("adapter_ns", i64),
		// Appended within records/v1 (readers accept files without it).
		nullable("trace_input_tokens", i32),
		nullable("read_lag_ns", i64),
		nullable("retry_errors", str),
		nullable("output_tokens_source", enumType),
		nullable("server_minus_client_output_tokens", i32),
		highCardinality(nullable("server_extras", str)),
		nullable("cancel_after_ns", i64),
		nullable("task_id", i64),
		nullable("parent_request_id", i64),
		nullable("depth", i32),
		required("target", i32),
		// records/v2.
		nullable("parent_request_ids", arrow.ListOfNonNullable(i64)),
		// records/v2.1: generation endpoints (design 0023).
		nullable("media_items", i32),
		nullable("media_partials", i32),
		nullable("media_bytes", i64),
		nullable("audio_ns", i64),
		nullable("first_media_ns", i64),
		nullable("job_queue_ns", i64),
		nullable("job_generation_ns", i64),
		nullable("job_download_ns", i64),
		nullable("job_polls", i32),
		// records/v2.1: graded requests (null on the others).
		nullable("accuracy_task", str),
		highCardinality(nullable("accuracy_item", str)),
		nullable("accuracy_expected", str),
		nullable("accuracy_answer", str),
		nullable("accuracy_correct", arrow.FixedWidthTypes.Boolean),
		// records/v2.1: media (design 0022), null for a text request.
		nullable("input_images", i32),
		nullable("input_image_bytes", i64),
		nullable("input_image_pixels", i64),
		nullable("input_image_sizes", str),
		nullable("input_audios", i32),
		nullable("input_audio_bytes", i64),
		nullable("input_audio_ns", i64),
		nullable("input_videos", i32),
		nullable("input_video_bytes", i64),
	)
	return fs
}

// RecordsSchema returns the Arrow schema of the records table
// (records/v2.1), with its version in the schema metadata. The caller may
// keep it; it is not shared.
func RecordsSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{SchemaKey}, []string{RecordsVersion})
	return arrow.NewSchema(recordsFields(), &md)
}

// EventsSchema returns the Arrow schema of the events table (events/v1).
func EventsSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{SchemaKey}, []string{EventsVersion})
	return arrow.NewSchema([]arrow.Field{
		required("request_id", arrow.PrimitiveTypes.Uint64),
		required("seq", i32),
		required("time_ns", i64),
		required("time_at", TimestampNS),
		required("kind", enumType),
		nullable("tokens", i32),
		required("bytes", i32),
		required("events_in_read", i32),
		// Appended within events/v1 (readers accept files without it).
		nullable("choice", i32),
	}, &md)
}

// Telemetry table names and schema versions (docs/format/telemetry.md).
const (
	ServerMetricsTable   = "server_metrics"
	GPUTable             = "gpu"
	ServerMetricsVersion = "server_metrics/v1"
	GPUVersion           = "gpu/v1"
)

// ServerMetricsSchema is the schema of server_metrics: one row per sample of
// a server's Prometheus page (record.MetricSample).
func ServerMetricsSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{SchemaKey}, []string{ServerMetricsVersion})
	return arrow.NewSchema([]arrow.Field{
		{Name: "time_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "time", Type: TimestampNS},
		{Name: "target", Type: arrow.BinaryTypes.String},
		{Name: "metric", Type: arrow.BinaryTypes.String},
		{Name: "type", Type: arrow.BinaryTypes.String},
		{Name: "labels", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "part", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "bound", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64},
	}, &md)
}

// GPUSchema is the schema of gpu: one row per GPU per sample
// (record.GPUSample); a value the source did not give is null.
func GPUSchema() *arrow.Schema {
	md := arrow.NewMetadata([]string{SchemaKey}, []string{GPUVersion})
	f64 := func(name string) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: "time_ns", Type: arrow.PrimitiveTypes.Int64},
		{Name: "time", Type: TimestampNS},
		{Name: "source", Type: arrow.BinaryTypes.String},
		{Name: "gpu", Type: arrow.PrimitiveTypes.Int32},
		{Name: "uuid", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		f64("util_pct"), f64("mem_used_bytes"), f64("mem_total_bytes"), f64("power_w"),
		f64("energy_j"), f64("temp_c"), f64("sm_clock_mhz"),
	}, &md)
}
