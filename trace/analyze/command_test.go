package analyze

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/exitcode"
)

// TestCommandValidate checks that Validate reports every problem of a
// command line at once, naming the flags, and that Run refuses it as a
// usage error before reading the trace.
func TestCommandValidate(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(tr, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 5}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Command{Args: []string{tr}, Output: tr, Format: "nope", BlockSize: -1, StdinSpool: 0, CacheSizes: "1Q"}
	_, err := c.Validate()
	for _, w := range []string{"--output " + tr + " is the trace itself", "--format: ", "--block-size -1", "--max-input-tokens 0",
		"--stdin-spool-mib 0", "--cache-sizes: "} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate = %v, want it to say %q", err, w)
		}
	}
	err = Run(context.Background(), c, Env{Write: func(func(io.Writer) error) error {
		t.Error("Write called")
		return nil
	}})
	if exitcode.Code(err) != exitcode.Usage || exitcode.Hint(err) != "see 'reprise analyze-trace --help'" {
		t.Errorf("Run = %v, want a usage error", err)
	}
	good := Command{Args: []string{tr}, MaxInput: 1 << 20, StdinSpool: 1, CacheSizes: "1M"}
	fc, err := good.Validate()
	if err != nil || fc.StdinSpool != 1<<20 || len(fc.Analyzer.CacheSizes) != 1 || fc.Trace.MaxInputTokens != 1<<20 {
		t.Errorf("Validate = %+v, %v", fc, err)
	}
}
