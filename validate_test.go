package reprise

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/trace"
)

// reverseLines returns the lines of b in reverse order, so a sorted trace
// becomes one the reader must sort.
func reverseLines(b []byte) []byte {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	slices.Reverse(lines)
	return []byte(strings.Join(lines, "\n") + "\n")
}

// TestReadTraceFromMatchesReadAll: a trace read from standard input (its
// unnamed copy) gives exactly the rows and stats trace.ReadAll gives for the same bytes in a
// file (the oracle), sorted, unsorted, with sessions and delay-only turns,
// compressed or not.
func TestReadTraceFromMatchesReadAll(t *testing.T) {
	files := []string{
		"traces/mooncake-sample.jsonl",
		"traces/bailian-sample.jsonl",
		"traces/burstgpt-sample.csv",
		"trace/testdata/aiperf_multi.jsonl",
		"trace/testdata/aiperf_single.jsonl",
		"trace/testdata/mooncake_ext.jsonl",
		"trace/testdata/mooncake40.jsonl.zst",
		"trace/testdata/azure2024.csv",
	}
	dir := t.TempDir()
	for _, f := range []string{"traces/mooncake-sample.jsonl", "trace/testdata/mooncake_ext.jsonl",
		"trace/testdata/aiperf_multi.jsonl", "traces/bailian-sample.jsonl"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "reversed-"+filepath.Base(f))
		if err := os.WriteFile(p, reverseLines(b), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, wantStats, err := trace.ReadAll(f, trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := trace.Open(f, trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantFormat := r.Format()
			r.Close()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, gotStats, format, err := readStdinTrace(t, b, trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if format != wantFormat {
				t.Errorf("format %s, want %s", format, wantFormat)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rows (-ReadAll +readTraceFrom):\n%s", diff)
			}
			for i, w := range wantStats.FirstWarnings { // standard input is named "-"
				wantStats.FirstWarnings[i] = strings.Replace(w, f+":", "-:", 1)
			}
			if diff := cmp.Diff(wantStats, gotStats); diff != "" {
				t.Errorf("stats (-ReadAll +readTraceFrom):\n%s", diff)
			}
		})
	}
	// Errors name standard input as "-".
	_, _, _, err := readStdinTrace(t, []byte(`{"timestamp":0,"input_length":"x"}`+"\n"), trace.Options{})
	if pe, ok := errors.AsType[*trace.ParseError](err); !ok || pe.Path != "-" || pe.Line != 1 {
		t.Errorf("bad row: %v, want a ParseError at -:1", err)
	}
}

// readStdinTrace reads b as replay reads a trace from standard input that
// it holds whole: a first pass through the unnamed copy, then the rows
// from the copy.
func readStdinTrace(t *testing.T, b []byte, opts trace.Options) ([]trace.Row, trace.ReadStats, trace.Format, error) {
	t.Helper()
	o := &Options{Trace: TraceOptions{SpoolMiB: 64, Reader: bytes.NewReader(b)}}
	rp := &replayPlan{tracePath: "-"}
	defer rp.close()
	src := newTraceSource(o, rp, &opts)
	r, _, closeTrace, err := src.first(opts)
	if err != nil {
		return nil, trace.ReadStats{}, "", err
	}
	format := r.Format()
	_, err = trace.Scan(r, func(*trace.Row) {})
	closeTrace()
	if err != nil {
		return nil, trace.ReadStats{}, "", err
	}
	rows, stats, err := src.readAll(opts)
	return rows, stats, format, err
}
