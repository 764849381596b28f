package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/memstat"
	"github.com/reprise-bench/reprise/internal/testfiles"
)

// analyzeCLIModes are the two ways users run analyze-trace that the target
// of docs/benchmarks.md names: the JSON document to a file, and the text
// report on standard output.
var analyzeCLIModes = []struct {
	name string
	args []string
}{
	{"json", []string{"--json", "-o", os.DevNull}},
	{"text", nil},
}

// goBuild builds the main package in dir (relative to this package) into
// name in a temporary directory of tb, as make build does, and returns its
// path.
func goBuild(tb testing.TB, dir, name string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), name)
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, dir)
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	return bin
}

// childUsage runs argv under testdata/childusage (built at usageBin) with
// the extra environment env and stdout (nil: /dev/null), and returns the
// CPU time (user + system) and the peak RSS of the command alone.
func childUsage(tb testing.TB, usageBin string, env []string, stdout io.Writer, argv ...string) (cpu time.Duration, rssBytes int64) {
	tb.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(usageBin, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	cmd.ExtraFiles = []*os.File{w} // fd 3
	err = cmd.Run()
	w.Close()
	if err != nil {
		tb.Fatalf("%v: %v\n%s", argv, err, stderr.Bytes())
	}
	var user, sys int64
	if _, err := fmt.Fscan(r, &user, &sys, &rssBytes); err != nil {
		tb.Fatalf("childusage report: %v", err)
	}
	return time.Duration(user + sys), rssBytes
}

// BenchmarkAnalyzeTraceCLI runs `reprise analyze-trace FILE --json -o
// /dev/null` and `reprise analyze-trace FILE` (the text report, to
// /dev/null) as users do: the binary built as make build builds it (not
// measured), in a child process, on the 1M-row Mooncake file (the
// conversation trace repeated, testfiles.Repeated; REPRISE_BENCH_ROWS
// changes the count). It reports rows per CPU second of the whole process
// (start-up, reading and hashing the file, the statistics and the report)
// and its peak RSS in MB (testdata/childusage says why it runs in
// between).
func BenchmarkAnalyzeTraceCLI(b *testing.B) {
	rows := memstat.BenchRows(1_000_000)
	bin, usage := goBuild(b, ".", "reprise"), goBuild(b, "./testdata/childusage", "childusage")
	path := filepath.Join(b.TempDir(), "mooncake-1m.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	testfiles.WriteRepeated(b, f, "mooncake/conversation_trace.jsonl", rows)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	for _, m := range analyzeCLIModes {
		b.Run(m.name, func(b *testing.B) {
			var cpu time.Duration
			var rss int64
			for b.Loop() {
				c, r := childUsage(b, usage, nil, nil, append([]string{bin, "analyze-trace", path}, m.args...)...)
				cpu += c
				rss = max(rss, r)
			}
			b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(rss)/1e6, "peak-RSS-MB")
		})
	}
}

// TestBenchmarkAnalyzeTraceCLI checks what the benchmark runs: each mode's
// command, through childusage, in a child process (the test binary,
// running the CLI as main does), writes the report the in-process CLI
// writes, and its CPU time and peak RSS come back.
func TestBenchmarkAnalyzeTraceCLI(t *testing.T) {
	usage := goBuild(t, "./testdata/childusage", "childusage")
	path := filepath.Join(t.TempDir(), "mooncake-2x.jsonl")
	if err := os.WriteFile(path, testfiles.Repeated(t, "mooncake/conversation_trace.jsonl", 24062), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range analyzeCLIModes {
		t.Run(m.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report")
			args := append([]string{"analyze-trace", path}, m.args...)
			if m.args != nil {
				args[len(args)-1] = out // -o FILE instead of /dev/null
			}
			var stdout bytes.Buffer
			cpu, rss := childUsage(t, usage, []string{cliChildEnv + "=" + cliChildArgv}, &stdout, cliChildCommand(args...)...)
			if cpu <= 0 || rss <= 0 {
				t.Errorf("cpu %v, rss %d: want both positive", cpu, rss)
			}
			read := func(got string) string {
				if m.args == nil {
					return got
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			got := read(stdout.String())
			code, want, errOut := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("in process: exit %d: %s", code, errOut)
			}
			if want = read(want); want == "" {
				t.Fatal("empty report")
			}
			if d := gocmp.Diff(want, got); d != "" {
				t.Errorf("child vs in-process report (-in process +child):\n%s", d)
			}
		})
	}
}
