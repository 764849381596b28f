package config

import "testing"

// Closest suggests by the edit distance that counts a swap as one edit.
func TestClosest(t *testing.T) {
	names := []string{"mode", "model", "url", "url-policy", "speedup", "seed"}
	for _, c := range []struct{ got, want string }{
		{"modle", "model"}, // a swap: same length as model
		{"mod", "mode"},    // a letter short of mode
		{"modl", "mode"},   // one edit from both, as long as mode
		{"urll", "url"},
		{"speedpu", "speedup"},
		{"x", ""},
		{"zzzzzz", ""},
	} {
		if got := Closest(c.got, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.got, got, c.want)
		}
	}
	if d := editDistance("modle", "model"); d != 1 {
		t.Errorf("editDistance(modle, model) = %d, want 1", d)
	}
}
