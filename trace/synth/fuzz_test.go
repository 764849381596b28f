package synth

import "testing"

// FuzzParseWindow: ParseWindow never panics, accepts only windows whose
// end is after their start, and what it accepts prints (String) to a
// window that parses back to the same value.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"10m:20m", "600:1200.5", "1h:", ":90s", ":", "5m:5m", "-1:5", "x:y", "1:1e300", "0x10:1h", "1.5h30m:2h", "1ns:2ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWindow(s)
		if err != nil {
			return
		}
		if w.Start < 0 || (w.HasEnd && w.End <= w.Start) {
			t.Fatalf("%q: accepted %+v", s, w)
		}
		back, err := ParseWindow(w.String())
		if err != nil || back != w {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, w, w.String(), back, err)
		}
	})
}
