package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// anonStats runs analyze-trace --json on path and returns the report
// without its source identity (path, size, digest differ by design).
func anonStats(t *testing.T, path string) map[string]any {
	t.Helper()
	code, out, errs := runCLI(t, "", "analyze-trace", "--json", "--block-size", "512", path)
	if code != 0 {
		t.Fatalf("analyze-trace %s: exit %d: %s", path, code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "source")
	return m
}

// TestAnonymizeKeepsStatistics: anonymize changes every hash id, keeps no
// id of the source, and analyze-trace reports exactly the same statistics
// (arrivals, lengths, prefix-cache hit ratios, AIPerf's section) before
// and after. With one --key two runs write the same trace; without one,
// each run draws a fresh key.
func TestAnonymizeKeepsStatistics(t *testing.T) {
	dir := t.TempDir()
	src := sampleTrace
	out, out2, fresh := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "c.jsonl")
	key := strings.Repeat("0f", 32)
	for _, o := range []string{out, out2} {
		if code, _, errs := runCLI(t, "", "anonymize", "--key", key, "-o", o, src); code != 0 {
			t.Fatalf("anonymize: exit %d: %s", code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "anonymize", "-o", fresh, src); code != 0 {
		t.Fatalf("anonymize: exit %d: %s", code, errs)
	}
	if diff := cmp.Diff(anonStats(t, src), anonStats(t, out)); diff != "" {
		t.Errorf("analyze-trace differs after anonymize (-source +anonymized):\n%s", diff)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(out2)
	c, _ := os.ReadFile(fresh)
	if string(a) != string(b) {
		t.Error("one key gave two different traces")
	}
	if string(a) == string(c) {
		t.Error("a fresh key gave the same trace as --key")
	}
	if strings.Contains(string(a), `"hash_ids": [0, 1, 2, 3`) {
		t.Errorf("the source's ids survive:\n%.300s", a)
	}
}

// TestAnonymizeJitterAndText: --jitter moves timestamps but keeps the
// lengths; a row whose prompt is text only is refused with its line.
func TestAnonymizeJitterAndText(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "j.jsonl")
	if code, _, errs := runCLI(t, "", "anonymize", "--jitter", "500ms", "-o", out, sampleTrace); code != 0 {
		t.Fatalf("anonymize: exit %d: %s", code, errs)
	}
	before, after := anonStats(t, sampleTrace), anonStats(t, out)
	if cmp.Equal(before["arrivals"], after["arrivals"]) {
		t.Error("--jitter changed no arrival statistic")
	}
	if diff := cmp.Diff(before["lengths"], after["lengths"]); diff != "" {
		t.Errorf("lengths changed (-before +after):\n%s", diff)
	}
	text := filepath.Join(dir, "text.jsonl")
	os.WriteFile(text, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 2}`+"\n"+`{"timestamp": 1, "text_input": "my secret", "output_length": 2}`+"\n"), 0o600)
	code, _, errs := runCLI(t, "", "anonymize", "-o", filepath.Join(dir, "t.jsonl"), text)
	if code != 2 || !strings.Contains(errs, "line 2: the row's prompt is text without an input_length") {
		t.Errorf("text row: exit %d: %s", code, errs)
	}
}
