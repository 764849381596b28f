package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayRetrievalNeedsNoOSL: a synthetic load of an embeddings or
// rankings endpoint is its input length alone, as README's examples give
// it; an output length is not asked for.
func TestReplayRetrievalNeedsNoOSL(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, args := range [][]string{
		{"--endpoint", "embeddings", "--batch-size", "4", "--isl", "32", "--request-rate", "50"},
		{"--endpoint", "rerank-tei", "--batch-size", "4", "--query-tokens", "8", "--isl", "32", "--concurrency", "2"},
	} {
		t.Run(args[1], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, _, stderr := runCLI(t, "", append([]string{"replay", "--url", srv.URL(), "--model", "reprise-mock",
				"--request-count", "3", "--no-server-metrics", "-q", "--out", out, "--format", "jsonl"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, stderr)
			}
			if n := len(readRecords(t, out)); n != 3 {
				t.Errorf("%d records, want 3", n)
			}
		})
	}
	// Without --isl it is still a usage error, naming the input length only.
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--model", "reprise-mock", "--endpoint", "embeddings", "--request-rate", "5")
	if code != 2 || !strings.Contains(stderr, "--isl N (tokens per input") || strings.Contains(stderr, "--osl") {
		t.Errorf("no --isl: exit %d, want 2 naming --isl alone\n%s", code, stderr)
	}
}

// TestSweepRetryAfterFailedFirstPoint: a sweep whose first point fails (a
// trace that does not exist, as README's example once named) measures
// nothing, so the corrected command into the same --out runs instead of
// being refused as a different sweep.
func TestSweepRetryAfterFailedFirstPoint(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := filepath.Join(t.TempDir(), "sw")
	common := []string{"--url", srv.URL(), "-m", "reprise-mock", "--speedup", "20,40", "--request-count", "3",
		"--out", dir, "-q", "--no-server-metrics"}
	code, _, stderr := runCLI(t, "", append([]string{"sweep", "no-such-trace.jsonl"}, common...)...)
	if code == 0 {
		t.Fatalf("sweep of a missing trace: exit 0\n%s", stderr)
	}
	code, _, stderr = runCLI(t, "", append([]string{"sweep", "../../traces/mooncake-sample.jsonl"}, common...)...)
	if code != 0 {
		t.Fatalf("the corrected sweep into the same --out: exit %d, want 0\n%s", code, stderr)
	}
	// Once a point is measured, another plan is refused as before.
	common[5] = "20,30"
	if code, _, stderr := runCLI(t, "", append([]string{"sweep", "../../traces/mooncake-sample.jsonl"}, common...)...); code != 2 || !strings.Contains(stderr, "different sweep") {
		t.Errorf("another plan over a measured sweep: exit %d, want 2 \"different sweep\"\n%s", code, stderr)
	}
}

// TestProfileEndpointPath: AIPerf's --endpoint takes a path; AIPerf's
// tutorial command gives the chat path with --endpoint-type chat. A native
// endpoint's path is accepted (alone it picks that endpoint); a path
// that is not the --endpoint-type's, or no native endpoint's, exits 2.
func TestProfileEndpointPath(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, c := range []struct {
		args []string
		code int
		want string // in stderr, or the path the server saw
	}{
		{[]string{"--endpoint-type", "chat", "--endpoint", "/v1/chat/completions", "--streaming"}, 0, "/v1/chat/completions"},
		{[]string{"--endpoint", "v1/completions"}, 0, "/v1/completions"},
		{[]string{"--endpoint", "/v1/embeddings"}, 0, "/v1/embeddings"},
		{[]string{"--endpoint-type", "chat", "--endpoint", "/v1/completions"}, 2, "--endpoint /v1/completions is the path of completions, not of --endpoint-type chat"},
		{[]string{"--endpoint", "/api/generate"}, 2, "--endpoint /api/generate: no native endpoint is served at that path"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runCLI(t, "", append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4",
				"--request-count", "2", "--artifact-dir", dir, "--no-server-metrics", "--ui-type", "none"}, c.args...)...)
			if code != c.code || (c.code != 0 && !strings.Contains(stderr, c.want)) {
				t.Fatalf("exit %d, want %d with %q\n%s", code, c.code, c.want, stderr)
			}
			if log := srv.Log(); c.code == 0 && (len(log) == 0 || log[len(log)-1].Endpoint != c.want) {
				t.Errorf("the server's last request was not to %s", c.want)
			}
		})
	}
}

// TestDocInstall: README's install commands work from a clone (the module
// is not published, so go install …@latest cannot): both resolve the
// command's package. -n prints what they would run without building.
func TestDocInstall(t *testing.T) {
	for _, args := range [][]string{{"make", "-n", "build"}, {"go", "install", "-n", "./cmd/reprise"}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "GOBIN="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
