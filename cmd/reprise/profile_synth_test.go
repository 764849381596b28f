package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/synth"
)

// TestProfileSynthesisMultipliers: AIPerf's --synthesis-* multipliers
// reshape --input-file before the run, and the server sees it: prompts of
// the new lengths, the doubled shared prefix cached, outputs scaled and
// capped.
func TestProfileSynthesisMultipliers(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "mooncake.jsonl")
	rows := `{"timestamp":0,"input_length":600,"output_length":4,"hash_ids":[1,2]}
{"timestamp":1000,"input_length":700,"output_length":4,"hash_ids":[1,3]}
`
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in,
		"--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--synthesis-speedup-ratio", "10",
		"--synthesis-prefix-len-multiplier", "2", "--synthesis-prompt-len-multiplier", "0.5",
		"--synthesis-output-len-multiplier", "2", "--synthesis-max-osl", "6",
		"--artifact-dir", filepath.Join(dir, "run"), "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	log := srv.Log()
	if len(log) != 2 {
		t.Fatalf("%d requests; want 2", len(log))
	}
	// Shared prefix: 1 block of 512 → 2 blocks; tails 88 and 188 → 44, 94.
	for i, want := range []int{2*512 + 44, 2*512 + 94} {
		if log[i].PromptTokens != want || log[i].OutputTokens != 6 {
			t.Errorf("request %d: %d prompt and %d output tokens; want %d and 6 (4·2, capped)", i, log[i].PromptTokens, log[i].OutputTokens, want)
		}
	}
	if c := log[1].CachedTokens; c < 1024 || c >= 1024+16 {
		t.Errorf("second request: %d tokens cached; want the stretched prefix, 1024 (the mock's 16-token blocks)", c)
	}
}

// TestProfileSynthesisRootMultiplier: --synthesis-prefix-root-multiplier
// spreads the sessions over disjoint copies of the prefix tree, as
// trace/synth draws them with --random-seed: a request hits the server's
// cache exactly when an earlier one landed in its copy.
func TestProfileSynthesisRootMultiplier(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	in := filepath.Join(dir, "mooncake.jsonl")
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, `{"timestamp":%d,"input_length":40,"output_length":2,"hash_ids":[7,%d]}`+"\n", i*500, 100+i)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--input-file", in,
		"--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--synthesis-speedup-ratio", "10",
		"--isl-block-size", "32", "--synthesis-prefix-root-multiplier", "3", "--random-seed", "5",
		"--artifact-dir", filepath.Join(dir, "run"), "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, _, err := trace.ReadAll(in, trace.Options{Format: trace.FormatMooncake, BlockSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	cfg := synth.NewDeriveConfig()
	cfg.PrefixRootMultiplier, cfg.Seed = 3, 5
	if want, _, err = synth.Reshape(want, cfg); err != nil {
		t.Fatal(err)
	}
	log := srv.Log()
	if len(log) != len(want) {
		t.Fatalf("%d requests; want %d", len(log), len(want))
	}
	seen := map[uint64]bool{}
	copies := 0
	for i, l := range log {
		root := want[i].HashIDs[0]
		if hit := l.CachedTokens >= 32; hit != seen[root] {
			t.Errorf("request %d (copy with root id %d): %d tokens cached; want a hit %v", i, root, l.CachedTokens, seen[root])
		}
		if !seen[root] {
			copies++
		}
		seen[root] = true
	}
	if copies < 2 {
		t.Errorf("the 8 sessions landed in %d copies of 3; the test needs at least 2", copies)
	}
}

// TestProfileSynthesisErrors: bad values and a synthesis without a trace
// exit 2 naming the flag.
func TestProfileSynthesisErrors(t *testing.T) {
	srv := startMockServer(t, nil)
	in := filepath.Join(t.TempDir(), "mooncake.jsonl")
	if err := os.WriteFile(in, []byte(`{"timestamp":0,"input_length":40,"output_length":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-file", in, "--synthesis-output-len-multiplier", "-1"}, "--synthesis-output-len-multiplier -1: want a finite number > 0"},
		{[]string{"--input-file", in, "--synthesis-prefix-root-multiplier", "0"}, "--synthesis-prefix-root-multiplier 0: want a whole number ≥ 1"},
		{[]string{"--input-file", in, "--synthesis-max-osl", "-3"}, "--synthesis-max-osl -3: want ≥ 1 token"},
		{[]string{"--isl", "8", "--osl", "2", "--synthesis-prompt-len-multiplier", "2"}, "reshapes a trace"},
	} {
		args := append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--artifact-dir", t.TempDir(), "--quiet"}, c.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestProfileRequestRateSeries: --request-rate-series paces the run by
// the series: the records' intended send times are where the expected
// count Λ(t) of the series reaches each request (constant arrivals), and
// the server receives the late requests (50 req/s) closer together than
// the early ones (10 req/s rising).
func TestProfileRequestRateSeries(t *testing.T) {
	srv := startMockServer(t, nil)
	dir := t.TempDir()
	series := filepath.Join(dir, "series.json")
	if err := os.WriteFile(series, []byte(`{"points":[{"time_s":0,"qps":10},{"time_s":0.5,"qps":50}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "8", "--osl", "2",
		"--request-rate-series", series, "--arrival-pattern", "constant", "--request-count", "25",
		"--artifact-dir", out, "--format", "jsonl", "--quiet", "--export", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := readRecords(t, out)
	if len(recs) != 25 {
		t.Fatalf("%d records; want 25", len(recs))
	}
	// Λ(t) = 10t + 40t² up to 0.5 s (rate 10 + 80t), 15 + 50(t − 0.5) after.
	lambda := func(t float64) float64 {
		if t <= 0.5 {
			return 10*t + 40*t*t
		}
		return 15 + 50*(t-0.5)
	}
	// Records are written as requests end, not in send order.
	var intended []float64
	for _, r := range recs {
		intended = append(intended, r["intended_ns"].(float64))
	}
	slices.Sort(intended)
	var sent []float64
	for i, ns := range intended {
		at := (ns - intended[0]) / 1e9
		if got := lambda(at); math.Abs(got-float64(i)) > 1e-3 { // intended_ns to the µs
			t.Errorf("request %d intended at %.6f s, where the series' count is %.6f; want %d", i, at, got, i)
		}
		sent = append(sent, at)
	}
	log := srv.Log()
	if len(log) != 25 {
		t.Fatalf("%d requests reached the server; want 25", len(log))
	}
	gap := func(a, b int) float64 { return float64(log[b].ReceivedNS-log[a].ReceivedNS) / 1e9 / float64(b-a) }
	if early, late := gap(0, 5), gap(19, 24); !(early > 2*late) {
		t.Errorf("mean gap between arrivals at the server: %.4f s early, %.4f s late; want the late ones (50 req/s) much closer", early, late)
	}
}

// TestProfileRequestRateSeriesErrors: a bad series file is refused before
// anything is sent, naming the flag, the file and the point.
func TestProfileRequestRateSeriesErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"time_s":1,"qps":5},{"time_s":0.5,"qps":6}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-rate-series", bad}, "--request-rate-series: " + bad + ": point 1: time 500ms is not after point 0's 1s"},
		{[]string{"--request-rate-series", filepath.Join(dir, "none.json")}, "--request-rate-series: read request-rate series"},
	} {
		args := append([]string{"profile", "-m", "m", "--url", "http://127.0.0.1:9", "--isl", "8", "--osl", "2", "--artifact-dir", t.TempDir(), "--quiet"}, c.args...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestProfilePromptCorpus: --prompt-corpus sonnet builds the prompts of
// Shakespeare's words, and the server still counts exactly --isl tokens.
func TestProfilePromptCorpus(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--prompt-corpus", "sonnet",
		"--isl", "64", "--osl", "2", "--request-count", "6", "--artifact-dir", out, "--format", "jsonl", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, l := range srv.Log() {
		if l.PromptTokens != 64 {
			t.Errorf("request %d: %d prompt tokens, want 64", l.Seq, l.PromptTokens)
		}
	}
	words, err := prompt.CorpusWords(prompt.CorpusSonnet)
	if err != nil {
		t.Fatal(err)
	}
	sonnet := map[string]bool{}
	for _, w := range words {
		sonnet[w] = true
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
	if err != nil || len(inputs.Data) != 6 {
		t.Fatalf("inputs.json: %v, %d requests; want 6", err, len(inputs.Data))
	}
	for i, d := range inputs.Data {
		for _, w := range strings.Fields(d.Payloads[0].Messages[0].Content) {
			if !sonnet[w] {
				t.Fatalf("request %d: word %q is not Shakespeare's", i, w)
			}
		}
	}
	code, _, stderr = runCLI(t, "", "profile", "-m", "m", "--url", srv.URL(), "--prompt-corpus", "poems",
		"--isl", "8", "--osl", "2", "--artifact-dir", t.TempDir(), "--quiet")
	if code != 2 || !strings.Contains(stderr, `--prompt-corpus "poems": want sonnet or coding`) {
		t.Errorf("unknown corpus: exit %d, %q", code, stderr)
	}
}

// TestProfileCacheBust: two runs with the same seed send the same
// prompts, and the second finds them in the server's cache; with
// --cache-bust, a third and a fourth run against the same server find
// nothing cached (their prompts share no block with any earlier run's),
// while the lengths stay exact.
func TestProfileCacheBust(t *testing.T) {
	srv := startMockServer(t, nil)
	run := func(bust ...string) (cached, prompt int) {
		t.Helper()
		srv.ResetLog()
		args := append([]string{"profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "64", "--osl", "2",
			"--request-count", "4", "--random-seed", "3", "--artifact-dir", t.TempDir(), "--format", "jsonl", "--quiet", "--export", "none"}, bust...)
		code, _, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", bust, code, stderr)
		}
		log := srv.Log()
		if len(log) != 4 {
			t.Fatalf("%d requests; want 4", len(log))
		}
		for _, l := range log {
			cached += l.CachedTokens
			prompt += l.PromptTokens
		}
		return cached, prompt
	}
	run()
	if c, _ := run(); c < 4*48 {
		t.Fatalf("the same prompts again: %d tokens cached; want most of 4·64 (the control)", c)
	}
	for _, target := range []string{"first_turn_prefix", "system_suffix"} {
		if c, p := run("--cache-bust", target); c != 0 || p != 4*64 {
			t.Errorf("--cache-bust %s: %d tokens cached, %d sent; want 0 and 256", target, c, p)
		}
	}
	if c, _ := run("--cache-bust", "none"); c < 4*48 {
		t.Errorf("--cache-bust none: %d tokens cached; want the seed's prompts again, cached", c)
	}
	code, _, stderr := runCLI(t, "", "profile", "-m", "m", "--url", srv.URL(), "--cache-bust", "everywhere",
		"--isl", "8", "--osl", "2", "--artifact-dir", t.TempDir(), "--quiet")
	if code != 2 || !strings.Contains(stderr, `--cache-bust "everywhere": want none, system_prefix`) {
		t.Errorf("unknown target: exit %d, %q", code, stderr)
	}
}
