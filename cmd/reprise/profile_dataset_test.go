package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileSeqDist: --seq-dist sends each request with one pair of the
// mixture's lengths, as the mock's oracle log counts them, and both pairs
// occur.
func TestProfileSeqDist(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--concurrency", "4",
		"--seq-dist", "20,4:50;60,12:50", "--request-count", "40", "--random-seed", "7",
		"--artifact-dir", out, "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	logs := srv.Log()
	if len(logs) != 40 {
		t.Fatalf("%d requests, want 40", len(logs))
	}
	seen := map[int]int{}
	for _, l := range logs {
		want := map[int]int{20: 4, 60: 12}[l.PromptTokens]
		if want == 0 || l.OutputTokens != want {
			t.Errorf("request %d: %d prompt and %d output tokens, want 20 and 4 or 60 and 12", l.Seq, l.PromptTokens, l.OutputTokens)
		}
		seen[l.PromptTokens]++
	}
	if seen[20] == 0 || seen[60] == 0 {
		t.Errorf("pairs drawn %v: want both", seen)
	}
}

// TestProfileSeqDistErrors: a malformed mixture or one beside --isl exits 2
// naming the flag.
func TestProfileSeqDistErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--seq-dist", "20,4:50;60,12:40"},
		{"--seq-dist", "20:100"},
		{"--seq-dist", "20,4:100", "--isl", "30"},
	} {
		a := append([]string{"profile", "-m", "reprise-mock", "--url", "http://127.0.0.1:1", "--artifact-dir", t.TempDir()}, args...)
		code, _, stderr := runCLI(t, "", a...)
		if code != 2 || !strings.Contains(stderr, "--seq-dist") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming --seq-dist", args, code, stderr)
		}
	}
}

// TestProfileNoOutputLength: a file's row without an output length is
// sent with neither max_tokens nor ignore_eos (the server decides), a row
// with one with both, and stderr and the manifest say how many rows.
func TestProfileNoOutputLength(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "prompts.jsonl")
	if err := os.WriteFile(in, []byte(`{"text":"with a length","output_length":5}`+"\n"+`{"text":"without a length"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in,
		"--custom-dataset-type", "single_turn", "--artifact-dir", out, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "1 rows of the trace have no output length: they are sent without max_tokens and ignore_eos") {
		t.Errorf("stderr %q: want the note on the row without an output length", stderr)
	}
	payloads := firstPayloads(t, out)
	if len(payloads) != 2 {
		t.Fatalf("inputs.json: %d sessions; want 2", len(payloads))
	}
	for i, p := range payloads {
		_, mt := p["max_tokens"]
		_, ie := p["ignore_eos"]
		if with := strings.Contains(mustJSON(p), "with a length"); mt != with || ie != with {
			t.Errorf("payload %d %v: max_tokens %v, ignore_eos %v; want both only with the row's output_length", i, p, mt, ie)
		}
	}
	if n := len(srv.Log()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	var man map[string]any
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &man)
	}
	if err != nil || man["server_output_rows"] != 1.0 {
		t.Errorf("manifest: %v, server_output_rows %v; want 1", err, man["server_output_rows"])
	}
}

// firstPayloads returns the first request body of every session of the
// run directory's inputs.json.
func firstPayloads(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var inputs struct {
		Data []struct {
			Payloads []map[string]any `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err == nil {
		err = json.Unmarshal(b, &inputs)
	}
	if err != nil {
		t.Fatalf("inputs.json: %v", err)
	}
	out := make([]map[string]any, len(inputs.Data))
	for i, d := range inputs.Data {
		if len(d.Payloads) == 0 {
			t.Fatalf("inputs.json: session %d has no payload", i)
		}
		out[i] = d.Payloads[0]
	}
	return out
}

// TestProfileSyntheticNoOutputLength: a synthetic load without --osl is
// sent as AIPerf sends it, with neither max_tokens nor ignore_eos, both
// when lengths are drawn per request and from a --num-dataset-entries
// pool, and says so on stderr.
func TestProfileSyntheticNoOutputLength(t *testing.T) {
	srv := startMockServer(t, nil)
	for _, extra := range [][]string{nil, {"--num-dataset-entries", "3"}} {
		out := filepath.Join(t.TempDir(), "run")
		args := append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--request-count", "3",
			"--artifact-dir", out, "--format", "jsonl"}, extra...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		if !strings.Contains(stderr, "the synthetic load has no output length: requests are sent without max_tokens and ignore_eos") {
			t.Errorf("%v: stderr %q: want the note", extra, stderr)
		}
		payloads := firstPayloads(t, out)
		if len(payloads) != 3 {
			t.Fatalf("%v: inputs.json: %d sessions; want 3", extra, len(payloads))
		}
		for i, p := range payloads {
			_, mt := p["max_tokens"]
			_, ie := p["ignore_eos"]
			if mt || ie {
				t.Errorf("%v: payload %d: max_tokens %v, ignore_eos %v; want neither", extra, i, mt, ie)
			}
		}
	}
	if n := len(srv.Log()); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
	// replay keeps asking for the output length: only profile maps AIPerf's default.
	code, _, stderr := runCLI(t, "", "replay", "--url", srv.URL(), "--isl", "16", "--request-count", "1", "-o", filepath.Join(t.TempDir(), "r"))
	if code != 2 || !strings.Contains(stderr, "--osl") {
		t.Errorf("replay without --osl: exit %d, %s; want 2 naming --osl", code, stderr)
	}
}

// TestProfileNumDatasetEntries: a pool of 3 synthetic requests, 12 sent in
// AIPerf's shuffle order: each entry's prompt is sent exactly 4 times
// (one permutation per pass), and the server sees 3 distinct prompts.
// (With --input-file the entries are the file's: TestProfileFileEntries.)
func TestProfileNumDatasetEntries(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--num-dataset-entries", "3",
		"--isl", "24", "--isl-stddev", "6", "--osl", "3", "--request-count", "12", "--random-seed", "5",
		"--artifact-dir", out, "--format", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var inputs struct {
		Data []struct {
			Payloads []struct {
				Messages []struct{ Content string } `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(out, "inputs.json"))
	if err == nil {
		err = json.Unmarshal(b, &inputs)
	}
	if err != nil || len(inputs.Data) != 12 {
		t.Fatalf("inputs.json: %v, %d requests; want 12", err, len(inputs.Data))
	}
	count := map[string]int{}
	for _, d := range inputs.Data {
		count[d.Payloads[0].Messages[0].Content]++
	}
	if len(count) != 3 {
		t.Fatalf("%d distinct prompts, want 3", len(count))
	}
	for p, n := range count {
		if n != 4 {
			t.Errorf("prompt %.30q sent %d times, want 4", p, n)
		}
	}
	if n := len(srv.Log()); n != 12 {
		t.Errorf("%d requests reached the server, want 12", n)
	}
	code, _, stderr = runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--num-dataset-entries", "0",
		"--artifact-dir", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "--num-dataset-entries 0: want at least 1") {
		t.Errorf("0 entries: exit %d, %q; want 2 and the reason", code, stderr)
	}
}

// TestProfilePrefixPool: AIPerf's prefix pool of 2 prefixes of 32 tokens:
// every request is 32 + 8 tokens, the mock's cache misses the prefix once
// per prefix of the pool (2) and hits it on every other request.
func TestProfilePrefixPool(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--prompt-prefix-pool-size", "2",
		"--prompt-prefix-length", "32", "--isl", "8", "--osl", "2", "--request-count", "20", "--random-seed", "9",
		"--artifact-dir", out, "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cold := 0
	for _, l := range srv.Log() {
		switch {
		case l.PromptTokens != 40:
			t.Errorf("request %d: %d prompt tokens, want 40", l.Seq, l.PromptTokens)
		case l.CachedTokens < 32:
			cold++
		}
	}
	if n := len(srv.Log()); n != 20 || cold != 2 {
		t.Errorf("%d requests, %d without the prefix cached; want 20 and 2 (one per prefix)", n, cold)
	}
	code, _, stderr = runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--prompt-prefix-pool-size", "2",
		"--prompt-prefix-length", "32", "--shared-system-prompt-length", "16", "--isl", "8", "--osl", "2", "--artifact-dir", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "exclude --shared-system-prompt-length") {
		t.Errorf("with --shared-system-prompt-length: exit %d, %q; want 2 and the reason", code, stderr)
	}
}

// TestProfileSynthesisMaxISL: --synthesis-max-isl leaves the longer rows
// of a Mooncake trace out (the server sees the others only), and
// --synthesis-speedup-ratio is taken (as --speedup).
func TestProfileSynthesisMaxISL(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "mooncake.jsonl")
	rows := `{"timestamp":0,"input_length":100,"output_length":2,"hash_ids":[1]}
{"timestamp":100,"input_length":600,"output_length":2,"hash_ids":[2,3]}
{"timestamp":200,"input_length":200,"output_length":2,"hash_ids":[4]}
`
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in,
		"--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--synthesis-max-isl", "300", "--synthesis-speedup-ratio", "10",
		"--artifact-dir", filepath.Join(dir, "run"), "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []int
	for _, l := range srv.Log() {
		got = append(got, l.PromptTokens)
	}
	if len(got) != 2 || got[0]+got[1] != 300 {
		t.Errorf("prompt tokens %v; want the rows of 100 and 200 only", got)
	}
}
