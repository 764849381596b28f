package arrowio

import "testing"

func TestValidExportPrefix(t *testing.T) {
	for p, want := range map[string]bool{
		"mine": true, "run-1.a": true, "": false, ".": false, "..": false, "a/b": false, `a\b`: false,
		"summary": false, "manifest": false, "inputs": false, "records": false, "report": true, "a\x00": false,
	} {
		if got := ValidExportPrefix(p); got != want {
			t.Errorf("ValidExportPrefix(%q) = %v, want %v", p, got, want)
		}
	}
}
