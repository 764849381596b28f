package arrowio

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// ExportAIPerf writes AIPerf's profile_export.jsonl,
// profile_export_aiperf.json and profile_export_aiperf.csv to the run
// directory dir, each atomically,
// from the run's records table and its summary s. Every value is taken
// from s or, per request, from [summary.EachValue] with s.Options, and
// only renamed to AIPerf's tags and shapes: the exports agree with
// summary.json by construction. The records are read one batch at a
// time; manifest.json, when present, is copied as input_config.
//
// profile_export.jsonl has one line per measured request
// (docs/reference/aiperf.md §5): session_num and the request ids are
// reprise's request_id; credit_issued_ns is dispatched_ns;
// request_start_ns is sent_ns; request_ack_ns is headers_ns; worker_id
// is "sender-N". profile_export_aiperf.json (schema 1.3) is summary.json
// with AIPerf's header keys in place of run_info, its error_summary shape,
// and its metric tags.
func ExportAIPerf(dir string, s *summary.Summary) error {
	manifest, err := readRunFile(filepath.Join(dir, ManifestFile), MaxJSONFileBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		manifest = nil
	case err != nil:
		return fmt.Errorf("write %s: %w", AIPerfSummaryFile, err)
	case !json.Valid(manifest):
		return fmt.Errorf("write %s: %s is not valid JSON", AIPerfSummaryFile, filepath.Join(dir, ManifestFile))
	}
	f, err := os.CreateTemp(dir, "."+AIPerfRecordsFile+".*"+tmpSuffix)
	if err != nil {
		return fmt.Errorf("write %s: %w", AIPerfRecordsFile, err)
	}
	err = writeAIPerfRecords(f, dir, s.Options)
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
	b, err := aiperfSummary(s, manifest)
	if err != nil {
		return fmt.Errorf("encode %s: %w", AIPerfSummaryFile, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, AIPerfSummaryFile), b); err != nil {
		return err
	}
	c, err := aiperfCSV(b)
	if err != nil {
		return fmt.Errorf("encode %s: %w", AIPerfSummaryCSV, err)
	}
	return writeFileAtomic(filepath.Join(dir, AIPerfSummaryCSV), c)
}

// aiperfCSV returns profile_export_aiperf.csv from the JSON summary js
// (docs/reference/aiperf.md): a header line
// Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std and one
// row per distribution metric sorted by tag, named "Header (unit)"; a
// blank line; then Metric,Value and one row per scalar (count, rate,
// total). Numbers are %.2f, as AIPerf writes them.
func aiperfCSV(js []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	type stat struct {
		Unit                                                     string   `json:"unit"`
		Avg                                                      *float64 `json:"avg"`
		P50                                                      *float64 `json:"p50"`
		Min, Max, Sum, P1, P5, P10, P25, P75, P90, P95, P99, Std float64
	}
	tags := make([]string, 0, len(m))
	for k := range m {
		tags = append(tags, k)
	}
	slices.Sort(tags)
	var dist, scalar bytes.Buffer
	w := csv.NewWriter(&dist)
	sw := csv.NewWriter(&scalar)
	w.Write([]string{"Metric", "avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"})
	sw.Write([]string{"Metric", "Value"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, tag := range tags {
		var st stat
		if json.Unmarshal(m[tag], &st) != nil || st.Avg == nil {
			continue // header keys, error_summary, nested objects
		}
		name := aiperfHeader(tag)
		if st.Unit != "" {
			name += " (" + st.Unit + ")"
		}
		if st.P50 == nil {
			sw.Write([]string{name, f(*st.Avg)})
			continue
		}
		w.Write([]string{name, f(*st.Avg), f(st.Min), f(st.Max), f(st.Sum), f(st.P1), f(st.P5), f(st.P10), f(st.P25),
			f(*st.P50), f(st.P75), f(st.P90), f(st.P95), f(st.P99), f(st.Std)})
	}
	w.Flush()
	sw.Flush()
	if err := errors.Join(w.Error(), sw.Error()); err != nil {
		return nil, err
	}
	dist.WriteByte('\n')
	dist.Write(scalar.Bytes())
	return dist.Bytes(), nil
}

// aiperfHeader is a metric's display name in AIPerf's style: the tag's
// words capitalized but for short joining words ("time_to_first_token"
// is "Time to First Token").
func aiperfHeader(tag string) string {
	words := strings.Split(tag, "_")
	for i, w := range words {
		switch {
		case i > 0 && (w == "to" || w == "of" || w == "per" || w == "from"):
		case w == "isl" || w == "osl" || w == "e2e" || w == "http":
			words[i] = strings.ToUpper(w)
		case w != "":
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}

// AIPerfInput is one request body of inputs.json: the conversation it
// belongs to ("" for a request of its own) and the body as it was built.
type AIPerfInput struct {
	SessionID string
	Body      json.RawMessage
}

// WriteAIPerfInputs writes inputs.json to the run directory dir,
// atomically: AIPerf's {"data": [{"session_id", "payloads": [body, …]}]},
// one entry per conversation in order of first appearance, its bodies in
// the order given (a request without a session is an entry of its own,
// named "request-N"). Bodies that are not JSON (a Wasm adapter's) are
// left out.
func WriteAIPerfInputs(dir string, inputs []AIPerfInput) error {
	type entry struct {
		SessionID string            `json:"session_id"`
		Payloads  []json.RawMessage `json:"payloads"`
	}
	var data []*entry
	bySession := map[string]*entry{}
	for i, in := range inputs {
		if !json.Valid(in.Body) {
			continue
		}
		if in.SessionID == "" {
			data = append(data, &entry{SessionID: "request-" + strconv.Itoa(i), Payloads: []json.RawMessage{in.Body}})
			continue
		}
		e := bySession[in.SessionID]
		if e == nil {
			e = &entry{SessionID: in.SessionID}
			bySession[in.SessionID] = e
			data = append(data, e)
		}
		e.Payloads = append(e.Payloads, in.Body)
	}
	if data == nil {
		data = []*entry{}
	}
	b, err := json.MarshalIndent(map[string]any{"data": data}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", AIPerfInputsFile, err)
	}
	return writeFileAtomic(filepath.Join(dir, AIPerfInputsFile), append(b, '\n'))
}

// aiperfTags maps the summary's metric tags to AIPerf's where they differ.
var aiperfTags = map[string]string{
	"usage_prompt_cached_tokens": "usage_prompt_cache_read_tokens",
}

func aiperfTag(tag string) string {
	if t, ok := aiperfTags[tag]; ok {
		return t
	}
	return tag
}

// aiperfValue is one metric value in AIPerf's export shape.
type aiperfValue struct {
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

// aiperfError is an error object of AIPerf's exports.
type aiperfError struct {
	Code    int32  `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

type aiperfRecord struct {
	Metadata aiperfMetadata         `json:"metadata"`
	Metrics  map[string]aiperfValue `json:"metrics"`
	// Trace is the request's HTTP timing, with summary.Options.HTTPTrace
	// only (aiperf_trace.go).
	Trace *aiperfTrace `json:"trace_data,omitempty"`
	Error *aiperfError `json:"error"`
}

// aiperfErrorOf maps a failed request to AIPerf's error object: the HTTP
// status when there was one, 499 for cancellation, 502 for an error event
// inside the stream, 0 otherwise; type is reprise's error kind.
func aiperfErrorOf(r *record.Request) *aiperfError {
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
	return &aiperfError{Code: code, Type: string(r.ErrorKind), Message: r.ErrorMessage}
}

// aiperfMetrics returns a request's metrics in AIPerf's tags and display
// units (docs/reference/aiperf.md §4): every value the summary counts for
// it ([summary.EachValue]: for a failed request only those counted over
// every request), then a failed request's input length as error_isl, or
// the record columns AIPerf exports under names of its own.
func aiperfMetrics(r *record.Request, o summary.Options) map[string]aiperfValue {
	m := map[string]aiperfValue{}
	summary.EachValue(r, o, func(tag, unit string, v float64) { m[aiperfTag(tag)] = aiperfValue{v, unit} })
	if !r.OK() {
		m["error_isl"] = aiperfValue{float64(r.InputTokens), "tokens"}
		return m
	}
	if r.OutputTokens > 0 {
		m["output_token_count"] = aiperfValue{float64(r.OutputTokens), "tokens"}
	}
	if r.ServerReasoningTokens >= 0 {
		m["usage_reasoning_tokens"] = aiperfValue{float64(r.ServerReasoningTokens), "tokens"}
	}
	reused := 0.0
	if r.ConnReused {
		reused = 1
	}
	m["http_req_dns_lookup"] = aiperfValue{float64(r.DNSNS) / 1e6, "ms"}
	m["http_req_connection_reused"] = aiperfValue{reused, ""}
	m["http_req_data_sent"] = aiperfValue{float64(r.BytesSent), "bytes"}
	m["http_req_data_received"] = aiperfValue{float64(r.BytesReceived), "bytes"}
	return m
}

// writeAIPerfRecords writes profile_export.jsonl from the records table
// of dir: one line per measured (non-warmup) request.
func writeAIPerfRecords(w io.Writer, dir string, o summary.Options) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for req, err := range tableRows(nil, dir, RecordsTable, appendRequests) {
		if err != nil {
			return err
		}
		r := &req
		if r.Phase != record.PhaseProfile {
			continue
		}
		id := strconv.FormatUint(r.RequestID, 10)
		md := aiperfMetadata{
			SessionNum: r.RequestID, XRequestID: id, XCorrelationID: id, ConversationID: r.SessionID,
			TurnIndex: r.Turn, CreditIssuedNS: r.DispatchedNS, RequestStartNS: r.SentNS, RequestEndNS: r.EndNS,
			WorkerID: "sender-" + strconv.Itoa(int(r.SenderID)), RecordProcessorID: "reprise", BenchmarkPhase: "profiling",
		}
		if r.HeadersNS != 0 {
			md.RequestAckNS = &r.HeadersNS
		}
		if r.ErrorKind == record.ErrCancelled {
			md.WasCancelled = true
			md.CancellationTimeNS = &r.EndNS
		}
		rec := aiperfRecord{Metadata: md, Metrics: aiperfMetrics(r, o), Error: aiperfErrorOf(r)}
		if o.HTTPTrace {
			rec.Trace = aiperfTraceOf(r)
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// aiperfErrorCount is one entry of error_summary.
type aiperfErrorCount struct {
	ErrorDetails aiperfError `json:"error_details"`
	Count        int         `json:"count"`
}

// summaryOwnKeys are summary.json keys that profile_export_aiperf.json
// replaces with AIPerf's own (the header keys, error_summary) or leaves
// out (reprise's telemetry shape: AIPerf's telemetry_data is null; its
// comparability checks).
var summaryOwnKeys = []string{"schema_version", "run_info", "error_summary", "telemetry", "comparability"}

// aiperfSummary returns profile_export_aiperf.json: summary.json's
// statistics and aggregates under AIPerf's tags, with AIPerf's header
// keys and error_summary shape. manifest (raw JSON, nil when absent) is
// copied as input_config.
func aiperfSummary(s *summary.Summary, manifest json.RawMessage) ([]byte, error) {
	js, err := s.JSON()
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		return nil, err
	}
	for _, k := range summaryOwnKeys {
		delete(m, k)
	}
	out := make(map[string]any, len(m)+10)
	for k, v := range m {
		out[aiperfTag(k)] = v
	}
	errs := make([]aiperfErrorCount, 0, len(s.Errors))
	for _, e := range s.Errors {
		errs = append(errs, aiperfErrorCount{ErrorDetails: aiperfError{Code: e.Status, Type: string(e.Kind), Message: e.Message}, Count: e.Count})
	}
	if manifest == nil {
		manifest = json.RawMessage("null")
	}
	out["schema_version"] = AIPerfSchemaVersion
	out["aiperf_version"] = "reprise"
	out["benchmark_id"] = aiperfBenchmarkID(s)
	out["start_time"] = s.Run.Start.UTC().Format(time.RFC3339Nano)
	out["end_time"] = s.Run.End.UTC().Format(time.RFC3339Nano)
	out["was_cancelled"] = s.Run.Cancelled
	out["input_config"] = manifest
	out["run_info"] = map[string]string{"cli_command": "reprise replay"}
	out["telemetry_data"] = nil
	out["error_summary"] = errs
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// aiperfBenchmarkID is the benchmark_id of every AIPerf export of s.
func aiperfBenchmarkID(s *summary.Summary) string {
	return s.Run.Start.UTC().Format("20060102T150405Z") + "-" + s.Run.Mode
}
