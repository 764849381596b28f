package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadBounded: a tokenizer file that never ends (/dev/zero) or is
// larger than any tokenizer.json is refused after MaxFileBytes, not read
// into memory.
func TestLoadBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(big, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil { // sparse
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", big} {
		if _, err := os.Stat(p); err != nil {
			t.Skip(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "more than a tokenizer.json holds") {
			t.Errorf("Load(%s) = %v; want it refused as too large", p, err)
		}
	}
}
