package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bodyServer answers every chat or completions request at once, without
// streaming, and keeps the sha256 of each request body by X-Request-Id.
type bodyServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][32]byte
}

func newBodyServer(t *testing.T) *bodyServer {
	t.Helper()
	s := &bodyServer{bodies: map[string][32]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") || r.Method == http.MethodGet { // no metrics, no /v1/models (the preflight passes on a 404)
			http.NotFound(w, r) // no metrics page
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.bodies[r.Header.Get("X-Request-Id")] = sha256.Sum256(b)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"ok"},"text":"ok","finish_reason":"length"}],`+
			`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// replayed is what a replay sent and recorded, by trace row.
type replayed struct {
	bodies   map[int64][32]byte // every request of the row sent this body
	recs     map[int64][]string // the row's records, run-dependent columns dropped
	manifest map[string]any
	stderr   string
}

// replayBoth replays args (a trace and its flags) streamed and loaded
// (loadTraces) against a body server.
func replayBoth(t *testing.T, args ...string) (streamed, loaded replayed) {
	t.Helper()
	run := func(load bool) replayed {
		srv := newBodyServer(t)
		loadTraces = load
		defer func() { loadTraces = false }()
		out := t.TempDir()
		code, _, stderr := runCLI(t, "", append([]string{"replay", "--url", srv.URL, "--model", "m", "--no-streaming",
			"--out", out, "--format", "jsonl", "--max-error-rate", "0"}, args...)...)
		if code != 0 {
			t.Fatalf("load %v: exit %d: %s", load, code, stderr)
		}
		res := replayed{bodies: map[int64][32]byte{}, recs: map[int64][]string{}, stderr: stderr}
		for _, r := range readRecords(t, out) {
			row := int64(r["trace_row"].(float64))
			id := fmt.Sprint(int64(r["request_id"].(float64)))
			body, ok := srv.bodies[id]
			if !ok {
				t.Fatalf("request %s of row %d never reached the server", id, row)
			}
			if prev, ok := res.bodies[row]; ok && prev != body {
				t.Errorf("load %v: row %d sent two different bodies", load, row)
			}
			res.bodies[row] = body
			// Drop what depends on the run, not the trace.
			for k := range r {
				if strings.HasSuffix(k, "_ns") || strings.HasSuffix(k, "_at") || k == "request_id" || k == "sender_id" || k == "late" || k == "waited" || k == "conn_reused" || k == "retries" {
					delete(r, k)
				}
			}
			b, _ := json.Marshal(r)
			res.recs[row] = append(res.recs[row], string(b))
		}
		for _, rs := range res.recs {
			sort.Strings(rs)
		}
		b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res.manifest); err != nil {
			t.Fatal(err)
		}
		return res
	}
	return run(false), run(true)
}

// TestReplayStreamedMatchesLoaded: replaying a trace while reading it
// sends exactly the request bodies of the loaded replay, row by row
// (prompts, expected cached tokens, max tokens, per-row seeds), and
// records the same rows — for the Mooncake sample (512-token hash blocks,
// chat and completions with token-id prompts), inside an offset window,
// and going round the trace in rate mode.
func TestReplayStreamedMatchesLoaded(t *testing.T) {
	const sample = "../../traces/mooncake-sample.jsonl"
	n := 300
	if replayRowsUnderRace > 0 {
		n = replayRowsUnderRace
	}
	cases := []struct {
		name string
		args []string
	}{
		{"mooncake chat", []string{sample, "--speedup", "1000", "--request-count", fmt.Sprint(n)}},
		{"mooncake completions token ids", []string{sample, "--speedup", "1000", "--endpoint", "completions",
			"--prompt-format", "token-ids", "--request-count", fmt.Sprint(n)}},
		{"offset window", []string{sample, "--speedup", "1000", "--start-offset", "20s", "--end-offset", "60s"}},
		{"rate, round the trace", []string{sample, "--mode", "rate", "--request-rate", "2000", "--request-count", fmt.Sprint(n + 50)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			streamed, loaded := replayBoth(t, c.args...)
			if streamed.manifest["trace_streamed"] != true || loaded.manifest["trace_streamed"] != false {
				t.Fatalf("trace_streamed: %v streamed, %v loaded", streamed.manifest["trace_streamed"], loaded.manifest["trace_streamed"])
			}
			if len(streamed.bodies) == 0 {
				t.Fatal("nothing sent")
			}
			if diff := cmp.Diff(loaded.bodies, streamed.bodies); diff != "" {
				t.Errorf("request bodies by trace row (-loaded +streamed):\n%s", diff)
			}
			if diff := cmp.Diff(loaded.recs, streamed.recs); diff != "" {
				t.Errorf("records by trace row (-loaded +streamed):\n%s", diff)
			}
			if streamed.manifest["trace_rows"] != loaded.manifest["trace_rows"] {
				t.Errorf("trace_rows %v streamed, %v loaded", streamed.manifest["trace_rows"], loaded.manifest["trace_rows"])
			}
		})
	}
}

// TestReplayStreamFallback: traces that cannot be replayed while they are
// read are loaded whole, as before, and the replay says so: multi-turn
// sessions, unsorted rows, from a file or standard input (a sorted trace
// on standard input is streamed from its unnamed copy: TestReplayStdinStreamed).
func TestReplayStreamFallback(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../traces/mooncake-sample.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	unsorted := filepath.Join(dir, "reversed.jsonl")
	if err := os.WriteFile(unsorted, reverseLines(b), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, trace, stdin, why string
	}{
		{"multi-turn", "../../traces/bailian-sample.jsonl", "", "has multi-turn sessions"},
		{"unsorted", unsorted, "", "not sorted by arrival"},
		{"stdin unsorted", "-", `{"timestamp": 9, "input_length": 16, "output_length": 2}` + "\n" + strings.Repeat(`{"timestamp": 1, "input_length": 16, "output_length": 2}`+"\n", 9),
			"not sorted by arrival"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newBodyServer(t)
			out := t.TempDir()
			code, _, stderr := runCLI(t, c.stdin, "replay", c.trace, "--url", srv.URL, "--model", "m", "--no-streaming",
				"--out", out, "--format", "jsonl", "--speedup", "1000", "--request-count", "5")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if i := strings.Index(stderr, "held in memory ("); i < 0 || !strings.Contains(stderr[i:], c.why+")") {
				t.Errorf("stderr lacks the note (%s):\n%s", c.why, stderr)
			}
			m, err := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(m), `"trace_streamed": false`) {
				t.Error("manifest does not say trace_streamed false")
			}
		})
	}
}

// TestSecondTokenInTheFirstRead: a server that sends its first two
// tokens in one write gives a time to second token of 0 ms; records and
// summary.json agree on it: ttst_ns is 0 (not null) in every record and
// time_to_second_token counts every request, with p50 0.
func TestSecondTokenInTheFirstRead(t *testing.T) {
	event := func(s string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}` + "\n\n"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event("a")+event("b"))
		w.(http.Flusher).Flush()
		io.WriteString(w, event("c")+`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL, "--model", "m", "--isl", "20", "--osl", "3",
		"--concurrency", "1", "--request-count", "4", "--quiet", "--format", "jsonl", "--out", out, "--no-server-metrics")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	valued := 0
	for _, r := range readRecords(t, out) {
		if v, ok := r["ttst_ns"].(float64); ok {
			valued++
			if v != 0 {
				t.Errorf("ttst_ns %v, want 0: the first two tokens came in one write", v)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		TTST struct {
			Count int     `json:"count"`
			P50   float64 `json:"p50"`
		} `json:"time_to_second_token"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	st := s.TTST
	if valued != 4 || st.Count != valued || st.P50 != 0 {
		t.Errorf("%d records have ttst_ns, summary.json counts %d time_to_second_token values (p50 %v); want 4, 4, 0", valued, st.Count, st.P50)
	}
}
