package trace

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/testfiles"
)

// scanBoth runs scanMooncake and scanAll on line, each with a decoder of
// its own, and fails t when the fast path accepts a line that scanAll
// reads differently (other fields, other ids, or an error). It reports
// whether the fast path took the line.
func scanBoth(t *testing.T, line []byte) bool {
	t.Helper()
	fast := newJSONLDecoder(&Reader{name: "fast", format: FormatMooncake, block: 512})
	full := newJSONLDecoder(&Reader{name: "full", format: FormatMooncake, block: 512})
	var rf, ra Row
	if !fast.scanMooncake(line, &rf) {
		return false
	}
	if err := full.scanAll(line, &ra); err != nil {
		t.Fatalf("%q: the fast path takes it, scanAll refuses it: %v", line, err)
	}
	a, b := fast.f, full.f
	same := a.has == b.has && a.dupAliases == b.dupAliases && a.idsErr == b.idsErr &&
		bytes.Equal(a.timestamp, b.timestamp) && bytes.Equal(a.input, b.input) && bytes.Equal(a.output, b.output)
	if !same || !slices.Equal(rf.HashIDs, ra.HashIDs) {
		t.Fatalf("%q: fast path %+v ids %v, scanAll %+v ids %v", line, a, rf.HashIDs, b, ra.HashIDs)
	}
	return true
}

// TestScanMooncakeMatchesScan holds scan's fast path for the published
// Mooncake shape to the full scanner: every line of both real traces takes
// the fast path and reads the same, and lines that differ from the shape
// in one place (spacing, key order or name, numbers the fast path does not
// take, more keys, bad ids, trailing bytes) fall back to the full scanner.
func TestScanMooncakeMatchesScan(t *testing.T) {
	for _, name := range []string{"mooncake/conversation_trace.jsonl", "mooncake/synthetic_trace.jsonl"} {
		for line := range bytes.Lines(testfiles.TraceBytes(t, name)) {
			if !scanBoth(t, bytes.TrimSuffix(line, []byte("\n"))) {
				t.Fatalf("%s: %q does not take the fast path", name, line)
			}
		}
	}
	const base = `{"timestamp": 27000, "input_length": 1100, "output_length": 30, "hash_ids": [0, 14, 15]}`
	fallback := []string{
		strings.Replace(base, `": 27000`, `":27000`, 1),
		strings.Replace(base, `27000`, `027000`, 1),
		strings.Replace(base, `27000`, `-27000`, 1),
		strings.Replace(base, `27000`, `27000.5`, 1),
		strings.Replace(base, `27000`, `2.7e4`, 1),
		strings.Replace(base, `1100`, `"1100"`, 1),
		strings.Replace(base, `30`, ``, 1),
		strings.Replace(base, `"input_length"`, `"input_tokens"`, 1),
		strings.Replace(base, `"timestamp"`, `"delay"`, 1),
		strings.Replace(base, `[0, 14, 15]`, `[0, 14, x]`, 1),
		strings.Replace(base, `[0, 14, 15]`, `[0, 14, 15`, 1),
		strings.Replace(base, `[0, 14, 15]`, `"0"`, 1),
		strings.Replace(base, `]}`, `], "session_id": "a"}`, 1),
		`{"input_length": 1100, "timestamp": 27000, "output_length": 30, "hash_ids": [0]}`,
		base + " ",
		base + "}",
		base[:len(base)-1],
		`{"timestamp": 27000}`,
		``,
	}
	for _, line := range fallback {
		if scanBoth(t, []byte(line)) {
			t.Errorf("%q takes the fast path", line)
		}
	}
	for _, line := range []string{base, strings.Replace(base, `27000`, `0`, 1), strings.Replace(base, `[0, 14, 15]`, `[]`, 1),
		strings.Replace(base, `[0, 14, 15]`, `[18446744073709551615, 7]`, 1)} {
		if !scanBoth(t, []byte(line)) {
			t.Errorf("%q does not take the fast path", line)
		}
	}
}
