package arrowio

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// AIPerf's response-text export (--export-outputs-json).
const (
	// AIPerfOutputsFile holds the response texts (WriteAIPerfOutputs).
	AIPerfOutputsFile = "outputs.json"
	// AIPerfOutputsSchemaVersion is the outputs.json schema written.
	AIPerfOutputsSchemaVersion = "1.1"
)

// aiperfOutput is one entry of outputs.json: AIPerf's per-request
// metadata, the request's metrics as profile_export.jsonl gives them, and
// the response text (null when none was captured).
type aiperfOutput struct {
	SessionNum     uint64                 `json:"session_num"`
	ConversationID string                 `json:"conversation_id"`
	TurnIndex      int32                  `json:"turn_index"`
	XRequestID     string                 `json:"x_request_id"`
	BenchmarkPhase string                 `json:"benchmark_phase"`
	RequestStartNS int64                  `json:"request_start_ns"`
	RequestEndNS   int64                  `json:"request_end_ns"`
	Metrics        map[string]aiperfValue `json:"metrics"`
	ResponseText   *string                `json:"response_text"`
}

// WriteAIPerfOutputs writes outputs.json to the run directory dir,
// atomically, in AIPerf's shape (schema 1.1):
//
//	{"schema_version": "1.1", "data": [ENTRY, …], "warmup": [ENTRY, …]}
//
// one ENTRY per request of the records table (target 0's with fan-out),
// measured ones in data and warmup ones in warmup, each sorted by
// session_num (reprise's request_id) and turn_index. An ENTRY carries
// session_num, conversation_id, turn_index, x_request_id,
// benchmark_phase, request_start_ns, request_end_ns, metrics (as in
// profile_export.jsonl) and response_text: texts[request_id], or null
// when the request has no entry there (it failed before a body, or
// nothing was captured). The caller owns texts and has redacted them; it
// is only read.
func WriteAIPerfOutputs(dir string, o summary.Options, texts map[uint64]string) error {
	var data, warmup []aiperfOutput
	for req, err := range tableRows(nil, dir, RecordsTable, appendRequests) {
		if err != nil {
			return fmt.Errorf("write %s: %w", AIPerfOutputsFile, err)
		}
		r := &req
		if r.Target != 0 {
			continue
		}
		id := strconv.FormatUint(r.RequestID, 10)
		e := aiperfOutput{
			SessionNum: r.RequestID, ConversationID: r.SessionID, TurnIndex: r.Turn, XRequestID: id,
			BenchmarkPhase: "profiling", RequestStartNS: r.SentNS, RequestEndNS: r.EndNS,
			Metrics: aiperfMetrics(r, o),
		}
		if t, ok := texts[r.RequestID]; ok {
			e.ResponseText = &t
		}
		if r.Phase == record.PhaseWarmup {
			e.BenchmarkPhase = "warmup"
			warmup = append(warmup, e)
		} else {
			data = append(data, e)
		}
	}
	byRequest := func(a, b aiperfOutput) int {
		return cmp.Or(cmp.Compare(a.SessionNum, b.SessionNum), cmp.Compare(a.TurnIndex, b.TurnIndex))
	}
	slices.SortStableFunc(data, byRequest)
	slices.SortStableFunc(warmup, byRequest)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	fmt.Fprintf(w, "{\n  \"schema_version\": %q,\n  \"data\": [", AIPerfOutputsSchemaVersion)
	if err := writeOutputEntries(w, data); err != nil {
		return fmt.Errorf("encode %s: %w", AIPerfOutputsFile, err)
	}
	w.WriteString("],\n  \"warmup\": [")
	if err := writeOutputEntries(w, warmup); err != nil {
		return fmt.Errorf("encode %s: %w", AIPerfOutputsFile, err)
	}
	w.WriteString("]\n}\n")
	if err := w.Flush(); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, AIPerfOutputsFile), buf.Bytes())
}

// writeOutputEntries writes es as the indented members of a JSON array.
func writeOutputEntries(w *bufio.Writer, es []aiperfOutput) error {
	for i := range es {
		b, err := json.MarshalIndent(&es[i], "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		w.Write(b)
	}
	if len(es) > 0 {
		w.WriteString("\n  ")
	}
	return nil
}

// ReadAIPerfOutputTexts returns the response texts of an outputs.json
// (request id → text; requests without a text are absent), for tests and
// tools that compare two runs' answers.
func ReadAIPerfOutputTexts(path string) (map[uint64]string, error) {
	b, err := readRunFile(path, MaxJSONFileBytes)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Data, Warmup []aiperfOutput
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := map[uint64]string{}
	for _, e := range append(doc.Data, doc.Warmup...) {
		if e.ResponseText != nil {
			out[e.SessionNum] = *e.ResponseText
		}
	}
	return out, nil
}
