package main

import (
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/arrowio"
)

// TestProfileExportOutputsJSON: --export-outputs-json writes outputs.json
// with one response text per request, as the mock answered.
func TestProfileExportOutputsJSON(t *testing.T) {
	srv := startMockServer(t, nil)
	out := filepath.Join(t.TempDir(), "run")
	code, _, stderr := runCLI(t, "", "profile", "-m", "reprise-mock", "--url", srv.URL(), "--isl", "16", "--osl", "4",
		"--request-count", "3", "--artifact-dir", out, "--quiet", "--export-outputs-json", "--api-key", "sk-secret-key")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	texts, err := arrowio.ReadAIPerfOutputTexts(filepath.Join(out, arrowio.AIPerfOutputsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 3 {
		t.Fatalf("%d texts, want 3: %v", len(texts), texts)
	}
	for id, s := range texts {
		if s == "" {
			t.Errorf("request %d: empty response text", id)
		}
	}
}

// TestOutputsJSONFixture: the outputs.json recorded against
// llm-d-inference-sim reads back with a response text per request.
func TestOutputsJSONFixture(t *testing.T) {
	texts, err := arrowio.ReadAIPerfOutputTexts(filepath.Join("testdata", "outputs-json", "llm-d-inference-sim.outputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 3 {
		t.Errorf("%d texts, want 3", len(texts))
	}
}
