package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/testfiles"
)

// TestAnalyzeTraceRealGolden holds analyze-trace's whole report, JSON and
// text, on real traces to its golden files byte for byte, so that a change
// to the reader or the analyzer that changes any number fails here. The
// repeated trace (the conversation trace five times, shifted in time, as in
// BenchmarkAnalyzeTraceCLI) is the shape of the 1M-row benchmark: every
// block of the later copies was seen, with reuse times of about an hour.
// The trace's temporary path is replaced by its name.
func TestAnalyzeTraceRealGolden(t *testing.T) {
	const conv = "mooncake/conversation_trace.jsonl"
	repeated := filepath.Join(t.TempDir(), "conversation_x5.jsonl")
	if err := os.WriteFile(repeated, testfiles.Repeated(t, conv, 5*12031), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		args []string
	}{
		{"conversation-json", testfiles.Trace(t, conv), []string{"--json"}},
		{"conversation-text", testfiles.Trace(t, conv), nil},
		{"synthetic-json", testfiles.Trace(t, "mooncake/synthetic_trace.jsonl"), []string{"--json"}},
		{"conversation-x5-json", repeated, []string{"--json"}},
		{"conversation-x5-text", repeated, nil},
		// Opaque ids (the interner's tables), sessions and turns.
		{"bailian-json", filepath.Join("..", "..", "trace", "testdata", "bailian.jsonl"), []string{"--json"}},
		{"mooncake-ext-json", filepath.Join("..", "..", "trace", "testdata", "mooncake_ext.jsonl"), []string{"--json"}},
		// Images and audio (a Parquet table of Hugging Face media cells).
		{"media-table-json", filepath.Join("..", "..", "trace", "testdata", "media_table.parquet"), []string{"--json"}},
		{"media-table-text", filepath.Join("..", "..", "trace", "testdata", "media_table.parquet"), nil},
		// Videos (AIPerf single_turn rows naming trace/media's MP4 and WebM
		// test videos): their seconds and frames from the containers.
		{"media-videos-json", filepath.Join("testdata", "media_videos.jsonl"), []string{"--json", "--format", "aiperf-single"}},
		{"media-videos-text", filepath.Join("testdata", "media_videos.jsonl"), []string{"--format", "aiperf-single"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append(append([]string{"analyze-trace"}, tt.args...), tt.path)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, strings.ReplaceAll(out, tt.path, filepath.Base(tt.path)))
		})
	}
}
