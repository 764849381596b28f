package wasm_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
)

var update = flag.Bool("update", false, "rewrite golden files")

// shippedRecordings maps each shipped adapter to its recordings.
var shippedRecordings = map[string]string{
	"anthropic-messages": "anthropic-*.http",
	"tgi-generate":       "tgi-*.http",
	"kserve-generate":    "kserve-*.http",
}

// TestShippedGolden runs every shipped adapter (except openai-chat, which
// the conformance test covers) over its recordings and compares the
// printed records with testdata/TestShippedGolden/ADAPTER/REC.golden.
func TestShippedGolden(t *testing.T) {
	for name, glob := range shippedRecordings {
		t.Run(name, func(t *testing.T) {
			a := load(t, name)
			in, err := a.Instantiate(&adapter.Config{Model: "test-model", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			recs, _ := filepath.Glob(filepath.Join("testdata", "recordings", glob))
			if len(recs) == 0 {
				t.Fatalf("no recordings match %s", glob)
			}
			for _, f := range recs {
				rec, err := wasm.ReadRecording(f)
				if err != nil {
					t.Fatal(err)
				}
				c, err := wasm.Classify(in, 7, rec, a.Info().Framing, 0)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				var buf bytes.Buffer
				if err := wasm.WriteClassified(&buf, c); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "TestShippedGolden", name, strings.TrimSuffix(filepath.Base(f), ".http")+".golden")
				if *update {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -run TestShippedGolden -update)", err)
				}
				if !bytes.Equal(want, buf.Bytes()) {
					t.Errorf("%s: output differs from %s:\n--- got\n%s\n--- want\n%s", f, golden, buf.Bytes(), want)
				}
			}
		})
	}
}
