package arrowio

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/internal/record"
)

// AIPerf export file names (--export aiperf), written next to the records.
const (
	AIPerfRecordsFile = "profile_export.jsonl"
	AIPerfSummaryFile = "profile_export_aiperf.json"
	// AIPerfSchemaVersion is the profile_export_aiperf.json schema written.
	AIPerfSchemaVersion = "1.3"
)

// AIPerfValue is one metric value in AIPerf's export shape.
type AIPerfValue struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// aiperfMetadata is a profile_export.jsonl record's metadata.
type aiperfMetadata struct {
	SessionNum          uint64  `json:"session_num"`
	XRequestID          string  `json:"x_request_id"`
	XCorrelationID      string  `json:"x_correlation_id"`
	ConversationID      string  `json:"conversation_id"`
	TurnIndex           int32   `json:"turn_index"`
	CreditIssuedNS      int64   `json:"credit_issued_ns"`
	RequestStartNS      int64   `json:"request_start_ns"`
	RequestAckNS        *int64  `json:"request_ack_ns"`
	RequestEndNS        int64   `json:"request_end_ns"`
	WorkerID            string  `json:"worker_id"`
	RecordProcessorID   string  `json:"record_processor_id"`
	BenchmarkPhase      string  `json:"benchmark_phase"`
	WasCancelled        bool    `json:"was_cancelled"`
	CancellationTimeNS  *int64  `json:"cancellation_time_ns"`
	AgentDepth          int     `json:"agent_depth"`
	ParentCorrelationID *string `json:"parent_correlation_id"`
}

// AIPerfError is an error object of AIPerf's exports.
type AIPerfError struct {
	Code    int32  `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

type aiperfRecord struct {
	Metadata aiperfMetadata         `json:"metadata"`
	Metrics  map[string]AIPerfValue `json:"metrics"`
	Error    *AIPerfError           `json:"error"`
}

// AIPerfErrorOf maps a failed request to AIPerf's error object: the HTTP
// status when there was one, 499 for cancellation, 502 for an error event
// inside the stream, 0 otherwise; type is reprise's error kind.
func AIPerfErrorOf(r *record.Request) *AIPerfError {
	if r.OK() {
		return nil
	}
	code := r.StatusCode
	switch r.ErrorKind {
	case record.ErrCancelled:
		code = 499
	case record.ErrStreamError:
		code = 502
	}
	return &AIPerfError{Code: code, Type: string(r.ErrorKind), Message: r.ErrorMessage}
}

// aiperfMetrics returns a request's per-record metrics in AIPerf's tags and
// display units (docs/reference/aiperf.md §4). Metrics that do not exist for
// the request are absent, not zero.
func aiperfMetrics(r *record.Request, streaming bool) map[string]AIPerfValue {
	m := map[string]AIPerfValue{}
	put := func(tag string, v float64, unit string) { m[tag] = AIPerfValue{v, unit} }
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	if !r.OK() {
		put("error_isl", float64(r.InputTokens), "tokens")
		return m
	}
	osl := r.OutputLength()
	put("input_sequence_length", float64(r.InputTokens), "tokens")
	put("output_sequence_length", float64(osl), "tokens")
	if r.OutputTokens > 0 {
		put("output_token_count", float64(r.OutputTokens), "tokens")
	}
	if r.ReasoningTokens > 0 {
		put("reasoning_token_count", float64(r.ReasoningTokens), "tokens")
	}
	if r.E2ENS > 0 {
		put("request_latency", ms(r.E2ENS), "ms")
		put("e2e_output_token_throughput", float64(osl)/(float64(r.E2ENS)/1e9), "tokens/sec")
	}
	if streaming {
		if r.TTFTNS > 0 {
			put("time_to_first_token", ms(r.TTFTNS), "ms")
			put("prefill_throughput_per_user", float64(r.InputTokens)/(float64(r.TTFTNS)/1e9), "tokens/sec")
		}
		if r.TTSTNS > 0 {
			put("time_to_second_token", ms(r.TTSTNS), "ms")
		}
		if r.TTFONS > 0 {
			put("time_to_first_output_token", ms(r.TTFONS), "ms")
		}
		if r.ITLNS > 0 {
			put("inter_token_latency", r.ITLNS/1e6, "ms")
			put("output_token_throughput_per_user", 1e9/r.ITLNS, "tokens/sec/user")
		}
		if r.HeadersNS > 0 && r.SentNS > 0 {
			put("stream_setup_latency", ms(r.HeadersNS-r.SentNS), "ms")
		}
	}
	if r.ServerPromptTokens >= 0 {
		put("usage_prompt_tokens", float64(r.ServerPromptTokens), "tokens")
	}
	if r.ServerCompletionTokens >= 0 {
		put("usage_completion_tokens", float64(r.ServerCompletionTokens), "tokens")
	}
	if r.ServerReasoningTokens >= 0 {
		put("usage_reasoning_tokens", float64(r.ServerReasoningTokens), "tokens")
	}
	if r.ServerCachedTokens >= 0 {
		put("usage_prompt_cache_read_tokens", float64(r.ServerCachedTokens), "tokens")
	}
	put("http_req_blocked", ms(r.BlockedNS), "ms")
	put("http_req_dns_lookup", ms(r.DNSNS), "ms")
	put("http_req_connecting", ms(r.ConnectNS), "ms")
	put("http_req_connection_reused", float64(b2f(r.ConnReused)), "")
	put("http_req_data_sent", float64(r.BytesSent), "bytes")
	put("http_req_data_received", float64(r.BytesReceived), "bytes")
	return m
}

func b2f(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteAIPerfRecords writes profile_export.jsonl: one line per measured
// (non-warmup) request in AIPerf's per-record shape
// (docs/reference/aiperf.md §5). Mapping: session_num and the request ids are
// reprise's request_id; credit_issued_ns is dispatched_ns;
// request_start_ns is sent_ns; request_ack_ns is headers_ns; worker_id is
// "sender-N". streaming selects the streaming-only metrics, as in AIPerf.
func WriteAIPerfRecords(w io.Writer, reqs []record.Request, streaming bool) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range reqs {
		r := &reqs[i]
		if r.Phase != record.PhaseProfile {
			continue
		}
		id := strconv.FormatUint(r.RequestID, 10)
		md := aiperfMetadata{
			SessionNum: r.RequestID, XRequestID: id, XCorrelationID: id, ConversationID: r.SessionID,
			TurnIndex: r.Turn, CreditIssuedNS: r.DispatchedNS, RequestStartNS: r.SentNS, RequestEndNS: r.EndNS,
			WorkerID: fmt.Sprintf("sender-%d", r.SenderID), RecordProcessorID: "reprise", BenchmarkPhase: "profiling",
		}
		if r.HeadersNS != 0 {
			md.RequestAckNS = &r.HeadersNS
		}
		if r.ErrorKind == record.ErrCancelled {
			md.WasCancelled = true
			md.CancellationTimeNS = &r.EndNS
		}
		if err := enc.Encode(aiperfRecord{Metadata: md, Metrics: aiperfMetrics(r, streaming), Error: AIPerfErrorOf(r)}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// AIPerfStats is a record metric's statistics in profile_export_aiperf.json,
// in the metric's display unit.
type AIPerfStats struct {
	Unit  string  `json:"unit"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
	Count int     `json:"count"`
	Sum   float64 `json:"sum"`
}

// AIPerfAggregate is a derived metric in profile_export_aiperf.json.
type AIPerfAggregate struct {
	Unit string  `json:"unit"`
	Avg  float64 `json:"avg"`
}

// AIPerfErrorCount is one entry of error_summary.
type AIPerfErrorCount struct {
	ErrorDetails AIPerfError `json:"error_details"`
	Count        int         `json:"count"`
}

// AIPerfSummary is the content of profile_export_aiperf.json (AIPerf
// schema 1.3, GenAI-Perf-shaped). The caller fills it from its summary;
// arrowio only knows the file's shape.
type AIPerfSummary struct {
	BenchmarkID  string
	StartTime    time.Time
	EndTime      time.Time
	WasCancelled bool
	// InputConfig is echoed as input_config (e.g. the run's manifest).
	InputConfig any
	CLICommand  string
	// Records holds record metrics (full statistics) by AIPerf tag.
	Records map[string]AIPerfStats
	// Aggregates holds derived metrics (unit + avg) by tag, e.g.
	// request_throughput, request_count, benchmark_duration.
	Aggregates   map[string]AIPerfAggregate
	ErrorSummary []AIPerfErrorCount
}

// MarshalJSON writes the summary as one flat object: the fixed keys plus
// one key per metric tag, sorted (encoding/json sorts map keys).
func (s AIPerfSummary) MarshalJSON() ([]byte, error) {
	m := map[string]any{
		"schema_version": AIPerfSchemaVersion,
		"aiperf_version": "reprise",
		"benchmark_id":   s.BenchmarkID,
		"start_time":     s.StartTime.UTC().Format(time.RFC3339Nano),
		"end_time":       s.EndTime.UTC().Format(time.RFC3339Nano),
		"was_cancelled":  s.WasCancelled,
		"input_config":   s.InputConfig,
		"run_info":       map[string]any{"cli_command": s.CLICommand},
		"telemetry_data": nil,
	}
	errs := s.ErrorSummary
	if errs == nil {
		errs = []AIPerfErrorCount{}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Count > errs[j].Count })
	m["error_summary"] = errs
	for k, v := range s.Records {
		m[k] = v
	}
	for k, v := range s.Aggregates {
		m[k] = v
	}
	return json.Marshal(m)
}

// WriteAIPerfExports writes dir/profile_export.jsonl from reqs and
// dir/profile_export_aiperf.json from sum, each atomically.
func WriteAIPerfExports(dir string, reqs []record.Request, streaming bool, sum AIPerfSummary) error {
	f, err := os.CreateTemp(dir, "."+AIPerfRecordsFile+".*"+tmpSuffix)
	if err != nil {
		return fmt.Errorf("write %s: %w", AIPerfRecordsFile, err)
	}
	err = WriteAIPerfRecords(f, reqs, streaming)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, AIPerfRecordsFile))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", AIPerfRecordsFile, err)
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", AIPerfSummaryFile, err)
	}
	return WriteFileAtomic(filepath.Join(dir, AIPerfSummaryFile), append(b, '\n'))
}
