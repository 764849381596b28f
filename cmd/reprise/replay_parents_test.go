package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/arrowio"
)

// TestReplayRecordsEveryParent replays testdata/dag.jsonl (a root, four
// workers waiting for it, a join waiting for all four): the join's
// record lists all four workers' request ids in parent_request_ids, in
// wait_for order, in JSON Lines and Parquet alike, and parent_request_id
// is one of them (issue 37, item 20: one of four was recorded).
func TestReplayRecordsEveryParent(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, format := range []string{"jsonl", "parquet"} {
		out := t.TempDir()
		code, _, stderr := runCLI(t, "", "replay", filepath.Join("testdata", "dag.jsonl"), "--block-size", "16",
			"--url", srv.URL(), "--model", "reprise-mock", "--out", out, "--quiet", "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		// request id by trace row, and each row's parents as written.
		idOf := map[int64]float64{}
		parents := map[int64][]float64{}
		parent := map[int64]float64{}
		if format == "jsonl" {
			_, vals := jsonlKeys(t, filepath.Join(out, "records.jsonl"))
			for _, v := range vals {
				row := int64(v["trace_row"].(float64))
				idOf[row] = v["request_id"].(float64)
				ps, ok := v["parent_request_ids"]
				if !ok {
					t.Fatalf("jsonl: no parent_request_ids column in %v", v)
				}
				if ps != nil {
					for _, p := range ps.([]any) {
						parents[row] = append(parents[row], p.(float64))
					}
				}
				if p, _ := v["parent_request_id"].(float64); v["parent_request_id"] != nil {
					parent[row] = p
				}
			}
		} else {
			reqs, err := arrowio.ReadRequests(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reqs {
				idOf[r.TraceRow] = float64(r.RequestID)
				for _, p := range r.DependsOn {
					parents[r.TraceRow] = append(parents[r.TraceRow], float64(p))
				}
				if r.ReleasedBy > 0 {
					parent[r.TraceRow] = float64(r.ReleasedBy - 1)
				}
			}
		}
		if len(idOf) != 6 {
			t.Fatalf("%s: %d records, want 6", format, len(idOf))
		}
		want := map[int64][]float64{
			1: {idOf[0]}, 2: {idOf[0]}, 3: {idOf[0]}, 4: {idOf[0]},
			5: {idOf[1], idOf[2], idOf[3], idOf[4]},
		}
		if d := cmp.Diff(want, parents); d != "" {
			t.Errorf("%s: parent_request_ids by trace row (-want +got):\n%s", format, d)
		}
		for row, ps := range want {
			if !slices.Contains(ps, parent[row]) {
				t.Errorf("%s: row %d: parent_request_id %v is not among %v", format, row, parent[row], ps)
			}
		}
	}
}

// TestRecordsV1RunsRead: a run directory written before records/v2
// (testdata/records-v1-dag, by reprise at 3e077c6: records/v1, no
// parent_request_ids) still reads: summarize gives its summary.json's
// every key (summary v2 adds some), report and compare succeed, and its records read with
// no parents beyond parent_request_id.
func TestRecordsV1RunsRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "records-v1-dag"))); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// summary.json v2 adds comparability and the server histograms'
	// buckets; every number v1 had stays as it was.
	code, stdout, stderr := runCLI(t, "", "summarize", "--json", dir)
	if code != 0 {
		t.Fatalf("summarize: exit %d, %s", code, stderr)
	}
	var was, is map[string]any
	if err := json.Unmarshal(want, &was); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(stdout), &is); err != nil {
		t.Fatal(err)
	}
	for k, v := range was {
		switch k {
		case "schema_version", "telemetry":
			continue
		}
		if d := cmp.Diff(v, is[k]); d != "" {
			t.Errorf("summarize: %s differs from the v1 summary.json (-v1 +now):\n%s", k, d)
		}
	}
	if code, _, stderr := runCLI(t, "", "report", dir, "-o", filepath.Join(t.TempDir(), "r.html")); code != 0 {
		t.Errorf("report: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "compare", dir, dir); code != 0 {
		t.Errorf("compare: exit %d: %s", code, stderr)
	}
	reqs, err := arrowio.ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	released := 0
	for _, r := range reqs {
		if r.DependsOn != nil {
			t.Errorf("request %d: DependsOn %v from a records/v1 file", r.RequestID, r.DependsOn)
		}
		if r.ReleasedBy > 0 {
			released++
		}
	}
	if len(reqs) != 6 || released != 5 {
		t.Errorf("%d requests, %d with parent_request_id; want 6 and 5", len(reqs), released)
	}
}
