package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/reprise-bench/reprise/arrowio"
)

// jsonlKeys returns the keys of every line of a JSON Lines file, in order,
// and the values.
func jsonlKeys(t *testing.T, path string) ([][]string, []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys [][]string
	var vals []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		var ks []string
		if _, err := d.Token(); err != nil {
			t.Fatal(err)
		}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k.(string))
			var v any
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		keys = append(keys, ks)
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		vals = append(vals, m)
	}
	return keys, vals
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// TestReplayJSONLColumns: --format jsonl writes the columns of the Parquet
// schema, in its order, with null (never -1 or "") where Parquet has null.
func TestReplayJSONLColumns(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, format := range []string{"jsonl", "parquet"} {
		out := t.TempDir()
		code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--isl", "16", "--osl", "4",
			"--concurrency", "2", "--request-count", "6", "--out", out, "--quiet", "--format", format, "--export-level", "events")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		if format == "parquet" {
			// The Parquet run of the same load: nulls in the same columns.
			reqs, err := arrowio.ReadRequests(out)
			if err != nil || len(reqs) != 6 || reqs[0].TraceRow != -1 || reqs[0].ServerReasoningTokens != -1 {
				t.Fatalf("parquet: %d records (%v), want 6 with no trace row and no server reasoning count", len(reqs), err)
			}
			continue
		}
		for table, schema := range map[string]*arrow.Schema{"records": arrowio.RecordsSchema(), "events": arrowio.EventsSchema()} {
			keys, vals := jsonlKeys(t, filepath.Join(out, table+".jsonl"))
			if len(keys) == 0 {
				t.Fatalf("%s.jsonl is empty", table)
			}
			for i, ks := range keys {
				if diff := cmp.Diff(fieldNames(schema), ks); diff != "" {
					t.Fatalf("%s.jsonl line %d: columns (-schema +jsonl):\n%s", table, i+1, diff)
				}
			}
			for i, m := range vals {
				for k, v := range m {
					if v == "" || v == -1.0 {
						t.Errorf("%s.jsonl line %d: %s = %#v, want null for an absent value", table, i+1, k, v)
					}
				}
			}
		}
		_, recs := jsonlKeys(t, filepath.Join(out, "records.jsonl"))
		for i, r := range recs {
			// A synthetic load has no trace row; the mock server reports no
			// reasoning tokens; every request succeeded.
			for _, k := range []string{"trace_row", "server_reasoning_tokens", "error_kind", "error_message"} {
				if r[k] != nil {
					t.Errorf("records.jsonl line %d: %s = %#v, want null", i+1, k, r[k])
				}
			}
		}
	}
}
