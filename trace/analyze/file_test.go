package analyze

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// writeTrace writes text to a file in a test directory and returns its path.
func writeTrace(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// delayRows is a Mooncake trace whose second row has a delay instead of a
// timestamp: it arrives 1 s after the row before it, so after the third
// row (0.5 s). In time order the arrivals are 0, 0.5 and 1 s.
const delayRows = `{"timestamp": 0, "input_length": 10, "output_length": 5}
{"delay": 1000, "input_length": 10, "output_length": 5}
{"timestamp": 500, "input_length": 10, "output_length": 5}
`

// The arrival statistics take every row at its effective arrival (a delay
// row at the previous arrival plus its delay) in time order: the three
// rows above used to give a gap of -0.5 s, a span of 0 and a rate of 0.
func TestDelayRowsInTimeOrder(t *testing.T) {
	check := func(t *testing.T, rep *Report) {
		t.Helper()
		a := rep.Arrivals
		if rep.SpanSeconds != 1 || a.MeanRate != 3 {
			t.Errorf("span %v s, mean rate %v/s; want 1 s and 3/s", rep.SpanSeconds, a.MeanRate)
		}
		if a.Gaps.Count != 2 || a.Gaps.Min != 0.5 || a.Gaps.Max != 0.5 {
			t.Errorf("gaps %+v; want two of 0.5 s", a.Gaps)
		}
		if a.TimedByDelay != 1 || a.DistinctTimestamps != 3 || a.Peak1s != 2 {
			t.Errorf("arrivals %+v; want 1 row timed by delay, 3 distinct times, 2 in the first second", a)
		}
	}
	t.Run("File", func(t *testing.T) {
		rep, err := File(t.Context(), writeTrace(t, "delay.jsonl", delayRows), FileConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Source.Sorted {
			t.Error("Source.Sorted is false: the rows are not in time order")
		}
		check(t, rep)
	})
	t.Run("Rows", func(t *testing.T) {
		rows, _, err := trace.ReadAll(writeTrace(t, "delay.jsonl", delayRows), trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, Rows(rows, Config{}))
	})
}

// A row out of order is logged once: the second pass that sorts the trace
// used to log every warning of the first again.
func TestOutOfOrderWarnedOnce(t *testing.T) {
	path := writeTrace(t, "unsorted.jsonl", `{"timestamp": 1000, "input_length": 10, "output_length": 5}
{"timestamp": 0, "input_length": 10, "output_length": 5}
`)
	var log bytes.Buffer
	cfg := FileConfig{Trace: trace.Options{Log: slog.New(slog.NewTextHandler(&log, nil))}}
	rep, err := File(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Source.Sorted {
		t.Error("Source.Sorted is false for an unsorted trace")
	}
	if n := strings.Count(log.String(), "row out of order"); n != 1 {
		t.Errorf("%d out-of-order warnings, want 1:\n%s", n, log.String())
	}
}

// A row without an output length is not a row of 0 output tokens: the
// output statistics (and AIPerf's) leave it out and count it apart.
func TestUnknownOutputLength(t *testing.T) {
	path := writeTrace(t, "osl.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 5}
{"timestamp": 1, "input_length": 20}
{"timestamp": 2, "input_length": 30, "output_length": 7}
`)
	rep, err := File(t.Context(), path, FileConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if o := rep.OSL; o.Count != 2 || o.Min != 5 || o.Mean != 6 || o.Max != 7 {
		t.Errorf("osl %+v; want the 2 rows with an output length (5, 7)", o)
	}
	if l := rep.Lengths; l.OSLUnknown != 1 || l.OutputTokens != 12 || l.OSLAtMost3 != 0 {
		t.Errorf("lengths %+v; want 1 row of unknown output length, 12 output tokens, none ≤ 3", l)
	}
	if rep.ISL.Count != 3 {
		t.Errorf("isl %+v; want every row", rep.ISL)
	}
	if a := rep.AIPerf; a.MinOSL != 5 || a.AvgOSL != 6 || a.OSLStats.Min != 5 || a.TotalRequests != 3 {
		t.Errorf("AIPerf min_osl %d, avg_osl %v, osl_stats %+v, %d requests; want 5, 6, min 5, 3",
			a.MinOSL, a.AvgOSL, a.OSLStats, a.TotalRequests)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "output length unknown       1 rows (not in the output statistics)") {
		t.Errorf("text report does not count the row without an output length:\n%s", text.String())
	}
}
