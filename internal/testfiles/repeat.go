package testfiles

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// RepeatShiftMS is the time shift, in milliseconds, between two copies of a
// trace in [Repeated]: a little over the Mooncake conversation trace's
// span (3,536,999 ms), so the copies follow one another in time order.
const RepeatShiftMS = 3_540_000

// Repeated returns the named JSON Lines trace (whose rows start with
// `{"timestamp": N`, as the Mooncake traces do) repeated until it has rows
// rows: copy c (0-based) is the original with RepeatShiftMS·c added to every
// timestamp, the rest of each line unchanged, so the result stays in time
// order and every copy after the first reuses the first copy's hash ids.
// It is the 1M-row file of the analyze-trace target (docs/benchmarks.md).
func Repeated(t testing.TB, name string, rows int) []byte {
	t.Helper()
	data, err := load(name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := repeat(data, rows, RepeatShiftMS)
	if err != nil {
		t.Fatalf("repeat %s: %v", name, err)
	}
	return out
}

// repeat is Repeated on the bytes of a trace.
func repeat(data []byte, rows int, shiftMS int64) ([]byte, error) {
	const key = `{"timestamp": `
	type line struct {
		ts   int64
		rest []byte // from the end of the timestamp to the newline, included
	}
	var lines []line
	for rest := data; len(rest) > 0; {
		l, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		if !bytes.HasPrefix(l, []byte(key)) {
			return nil, fmt.Errorf("line %d does not start with %s", len(lines)+1, key)
		}
		n := len(key)
		for n < len(l) && l[n] >= '0' && l[n] <= '9' {
			n++
		}
		ts, err := strconv.ParseInt(string(l[len(key):n]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: timestamp: %w", len(lines)+1, err)
		}
		lines = append(lines, line{ts: ts, rest: append(l[n:len(l):len(l)], '\n')})
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("no rows")
	}
	out := make([]byte, 0, len(data)/len(lines)*rows*11/10)
	for i := range rows {
		l := lines[i%len(lines)]
		out = append(out, key...)
		out = strconv.AppendInt(out, l.ts+int64(i/len(lines))*shiftMS, 10)
		out = append(out, l.rest...)
	}
	return out, nil
}
