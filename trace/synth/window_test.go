package synth

import (
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in   string
		want Window
		err  string
	}{
		{"10m:20m", Window{10 * time.Minute, 20 * time.Minute, true}, ""},
		{"600:1200.5", Window{600 * time.Second, 1200500 * time.Millisecond, true}, ""},
		{"1h:", Window{Start: time.Hour}, ""},
		{":90s", Window{End: 90 * time.Second, HasEnd: true}, ""},
		{" 0 : 1 ", Window{End: time.Second, HasEnd: true}, ""},
		{":", Window{}, ""},
		{"10m", Window{}, "want START:END"},
		{"5m:5m", Window{}, "not after the start"},
		{"2:1", Window{}, "not after the start"},
		{"-1:5", Window{}, "window start"},
		{"1:-5s", Window{}, "cannot be negative"},
		{"x:y", Window{}, "window start"},
		{"1:NaN", Window{}, "window end"},
		{"1:1e300", Window{}, "window end"},
	}
	for _, tt := range tests {
		got, err := ParseWindow(tt.in)
		if tt.err != "" {
			if err == nil {
				t.Errorf("%q: no error, want %q", tt.in, tt.err)
			} else if !contains(err.Error(), tt.err) {
				t.Errorf("%q: error %q, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestWindowContains(t *testing.T) {
	w := Window{Start: time.Second, End: 2 * time.Second, HasEnd: true}
	for _, tt := range []struct {
		t    time.Duration
		want bool
	}{{999 * time.Millisecond, false}, {time.Second, true}, {1999 * time.Millisecond, true}, {2 * time.Second, false}} {
		if got := w.Contains(tt.t); got != tt.want {
			t.Errorf("%v in %v: %v", tt.t, w, got)
		}
	}
	if !(Window{}).IsZero() || w.IsZero() {
		t.Error("IsZero")
	}
}
