package summarize

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
)

// TestValidate checks that Validate reports every problem of a config, in
// order, one a line.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, badGoodput := summary.ParseGoodput("nope")
	if badGoodput == nil {
		t.Fatal(`ParseGoodput("nope") is fine`)
	}
	for _, tt := range []struct {
		name string
		c    Config
		want string // "" = valid
	}{
		{"valid", Config{Args: []string{dir}, Format: "table"}, ""},
		{"benchfmt with goodput", Config{Args: []string{dir}, Format: "benchfmt", Goodput: "ttft:250", Export: "aiperf"}, ""},
		{"no dir", Config{Format: "json"}, "missing RUN_DIR: give a run directory written by reprise replay"},
		{"two dirs", Config{Args: []string{"a", "b"}, Format: "table"}, "want one RUN_DIR, got 2: a b"},
		{"missing dir", Config{Args: []string{"/no/such/run"}, Format: "table"},
			"RUN_DIR /no/such/run does not exist: give a run directory written by reprise replay (its --out, or one under runs/)"},
		{"file", Config{Args: []string{file}, Format: "table"},
			"RUN_DIR " + file + " is a file, not a directory: give the run directory that holds the record files"},
		{"everything", Config{JSON: true, Format: "benchfmt", Goodput: "nope", Export: "csv"}, "missing RUN_DIR: give a run directory written by reprise replay\n" +
			"--goodput: " + badGoodput.Error() + "\n--export \"csv\": want aiperf\n--json and --format benchfmt: pick one"},
		{"bad format", Config{Args: []string{dir}, Format: "csv"}, `--format "csv": want table, json or benchfmt`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.want == "":
			case err == nil:
				t.Errorf("Validate: nil, want %q", tt.want)
			case err.Error() != tt.want:
				t.Errorf("Validate:\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

// TestRun recomputes the summary of a small run directory in each format,
// and checks that a directory without records is a usage error with a
// hint.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	run, err := arrowio.Create(dir, arrowio.CreateConfig{Tables: arrowio.Config{Format: arrowio.FormatJSONL}})
	if err != nil {
		t.Fatal(err)
	}
	batch := []record.Request{
		{RequestID: 0, SentNS: 1_763_700_000_000_000_001, E2ENS: 52_000_000, StatusCode: 200,
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1},
		{RequestID: 1, TraceRow: 1, SentNS: 1_763_700_000_010_000_000, ErrorKind: record.ErrTimeout, ErrorMessage: "timeout after 60s",
			ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerReasoningTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1},
	}
	if err := run.Records().WriteRequests(batch); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteSummary(summary.Summarize(batch, summary.RunInfo{Model: "m", Mode: "fixed_schedule"}, summary.Options{}), run.Records().Report()); err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string]string{
		"table":    "Requests (ok / errors / warmup)    1 / 1 / 0\n",
		"json":     `"request_latency": {`,
		"benchfmt": "model: m\nmode: fixed_schedule\nstreaming: false\nBenchmarkReplay/e2e-mean 1 0.052 sec/op\n",
	} {
		c := Config{Args: []string{dir}, Format: format}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := Run(context.Background(), &b, c); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s: output lacks %q:\n%s", format, want, b.String())
		}
	}

	err = Run(context.Background(), new(strings.Builder), Config{Args: []string{t.TempDir()}, Format: "table"})
	if exitcode.Code(err) != exitcode.Usage || !strings.Contains(exitcode.Hint(err), "records.parquet") {
		t.Errorf("a directory without records: %v (exit %d, hint %q), want a usage error naming the records", err, exitcode.Code(err), exitcode.Hint(err))
	}
}
