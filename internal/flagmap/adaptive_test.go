package flagmap

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise"
)

// TestParseControl: AIPerf's compact control, concurrency only.
func TestParseControl(t *testing.T) {
	for _, tt := range []struct {
		in       string
		min, max int
		err      string
	}{
		{"concurrency:1,400:int", 1, 400, ""},
		{"concurrency:4,8", 4, 8, ""},
		{"request_rate:1,8:float", 0, 0, "only concurrency"},
		{"concurrency:1,8:float", 0, 0, "is an int"},
		{"concurrency:8,4:int", 0, 0, "1 ≤ MIN ≤ MAX"},
		{"concurrency:0,4", 0, 0, "1 ≤ MIN ≤ MAX"},
		{"concurrency", 0, 0, "VARIABLE:MIN,MAX"},
	} {
		var a reprise.AdaptiveOptions
		err := parseControl(tt.in, &a)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || a.Min != tt.min || a.Max != tt.max {
			t.Errorf("%q: [%d, %d] %v, want [%d, %d]", tt.in, a.Min, a.Max, err, tt.min, tt.max)
		}
	}
}

// FuzzParseControl: any input is read or refused, never a panic; a
// range read has 1 ≤ min ≤ max.
func FuzzParseControl(f *testing.F) {
	for _, s := range []string{"concurrency:1,400:int", "concurrency:4,8", "users:1,2:int", "concurrency:,", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var a reprise.AdaptiveOptions
		if parseControl(s, &a) == nil && !(a.Min >= 1 && a.Min <= a.Max) {
			t.Errorf("%q read as [%d, %d]", s, a.Min, a.Max)
		}
	})
}
