package reprise

import (
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestOutputsLogRedacts: response texts are kept as they came, but a JSON
// answer's secret-looking keys and the run's API key and secret header
// values are replaced; target 1's answer of a fan-out is not kept.
func TestOutputsLogRedacts(t *testing.T) {
	o := Options{APIKey: "sk-abcdef", Headers: []string{"X-Auth: tok-12345", "Content-Type: application/json"}}
	o.Output.ExportOutputs = true
	l := newOutputsLog(&o)
	for _, tc := range []struct {
		id   uint64
		in   string
		want string
	}{
		{1, "42 is the answer", "42 is the answer"},
		{2, `{"api_key": "x", "n": 1}`, `{"api_key":"<redacted>","n":1}`},
		{3, `{"n": 1}`, `{"n": 1}`}, // no secret: kept byte for byte
		{4, "your key is sk-abcdef and tok-12345", "your key is <redacted> and <redacted>"},
	} {
		l.add(&record.Request{RequestID: tc.id}, []byte(tc.in))
		if got := l.texts[tc.id]; got != tc.want {
			t.Errorf("%q → %q, want %q", tc.in, got, tc.want)
		}
	}
	l.add(&record.Request{RequestID: 9, Target: 1}, []byte("x"))
	if _, ok := l.texts[9]; ok {
		t.Error("a fan-out target's answer was kept")
	}
	var none *outputsLog
	none.add(&record.Request{}, []byte("x")) // off: a no-op
	if newOutputsLog(&Options{}) != nil {
		t.Error("a log without ExportOutputs")
	}
}
