package arrowio

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/summary"
)

// TestExportAIPerfAgreesWithSummary: the AIPerf exports hold the summary's
// numbers and nothing recomputed. Every statistics object of
// profile_export_aiperf.json is what summary.Compute gives over the
// per-request values of profile_export.jsonl (so the two files agree with
// each other), every other key of summary.json is copied under its AIPerf
// tag, and per-request values follow the summary's options: with
// UseServerTokenCount, output_sequence_length is the server's count.
func TestExportAIPerfAgreesWithSummary(t *testing.T) {
	reqs := genRequests(600, 3)
	for i := range reqs {
		if r := &reqs[i]; r.OK() && r.ServerCompletionTokens >= 0 && i%4 == 0 {
			r.ServerCompletionTokens += 3 // the server counted differently
		}
	}
	dir := t.TempDir()
	writeRun(t, dir, Config{RowGroupRows: 64}, reqs, nil, 50)
	slos, err := summary.ParseGoodput("ttft:20")
	if err != nil {
		t.Fatal(err)
	}
	s := summary.Summarize(reqs, summary.RunInfo{Model: "m", Mode: "fixed", Streaming: true, Start: time.Unix(1_763_700_000, 0).UTC()},
		summary.Options{Streaming: true, UseServerTokenCount: true, Goodput: slos})
	if err := ExportAIPerf(dir, s); err != nil {
		t.Fatal(err)
	}

	// Per-request values by tag, and the lines themselves.
	f, err := os.Open(filepath.Join(dir, AIPerfRecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vals := map[string][]float64{}
	var lines int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Metadata struct {
				SessionNum uint64 `json:"session_num"`
			} `json:"metadata"`
			Metrics map[string]aiperfValue `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		r := &reqs[rec.Metadata.SessionNum]
		if osl, ok := rec.Metrics["output_sequence_length"]; ok && r.ServerCompletionTokens >= 0 && osl.Value != float64(r.ServerCompletionTokens) {
			t.Errorf("request %d: output_sequence_length %v, want the server's %d (UseServerTokenCount)", r.RequestID, osl.Value, r.ServerCompletionTokens)
		}
		for tag, v := range rec.Metrics {
			vals[tag] = append(vals[tag], v.Value)
		}
		lines++
	}
	if want := s.RequestCount + s.ErrorRequestCount; lines != want {
		t.Errorf("%d lines, want %d (measured requests)", lines, want)
	}

	b, err := os.ReadFile(filepath.Join(dir, AIPerfSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	js, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(js, &want); err != nil {
		t.Fatal(err)
	}
	for _, k := range summaryOwnKeys {
		delete(want, k)
	}
	for k, w := range want {
		g, ok := got[aiperfTag(k)]
		if !ok {
			t.Errorf("%s lacks summary.json's %s (as %s)", AIPerfSummaryFile, k, aiperfTag(k))
			continue
		}
		var gv, wv any
		json.Unmarshal(g, &gv)
		json.Unmarshal(w, &wv)
		if diff := cmp.Diff(wv, gv); diff != "" {
			t.Errorf("%s: (-summary.json +%s)\n%s", k, AIPerfSummaryFile, diff)
		}
	}
	checked := 0
	for tag, st := range s.Metrics {
		v := vals[aiperfTag(tag)]
		c := summary.Compute(v)
		if c.Count != st.Count || !near(c.Avg, st.Avg) || c.Min != st.Min || c.Max != st.Max || !near(c.P50, st.P50) || !near(c.P99, st.P99) || !near(c.Std, st.Std) {
			t.Errorf("%s: the per-request values give %+v, the summary %+v", tag, c, *st)
		}
		checked++
	}
	if checked < 15 {
		t.Errorf("only %d metrics checked", checked)
	}
	var e struct {
		ErrorSummary  []aiperfErrorCount `json:"error_summary"`
		SchemaVersion string             `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.ErrorSummary) != len(s.Errors) || e.SchemaVersion != AIPerfSchemaVersion {
		t.Errorf("error_summary %v, schema %q; want %d entries, %s", e.ErrorSummary, e.SchemaVersion, len(s.Errors), AIPerfSchemaVersion)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
