package testfiles

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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
	var out bytes.Buffer
	if err := repeat(&out, data, rows, RepeatShiftMS); err != nil {
		t.Fatalf("repeat %s: %v", name, err)
	}
	return out.Bytes()
}

// WriteRepeated writes [Repeated]'s trace to w as it makes it, holding one
// copy of the original: what a benchmark that measures another process's
// peak memory uses, so that its own stays small.
func WriteRepeated(t testing.TB, w io.Writer, name string, rows int) {
	t.Helper()
	data, err := load(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := repeat(w, data, rows, RepeatShiftMS); err != nil {
		t.Fatalf("repeat %s: %v", name, err)
	}
}

// repeat writes the rows of Repeated, made from the bytes of a trace, to w.
func repeat(w io.Writer, data []byte, rows int, shiftMS int64) error {
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
			return fmt.Errorf("line %d does not start with %s", len(lines)+1, key)
		}
		n := len(key)
		for n < len(l) && l[n] >= '0' && l[n] <= '9' {
			n++
		}
		ts, err := strconv.ParseInt(string(l[len(key):n]), 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: timestamp: %w", len(lines)+1, err)
		}
		lines = append(lines, line{ts: ts, rest: append(l[n:len(l):len(l)], '\n')})
	}
	if len(lines) == 0 {
		return fmt.Errorf("no rows")
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var num []byte
	for i := range rows {
		l := lines[i%len(lines)]
		num = strconv.AppendInt(num[:0], l.ts+int64(i/len(lines))*shiftMS, 10)
		bw.WriteString(key)
		bw.Write(num)
		if _, err := bw.Write(l.rest); err != nil {
			return err
		}
	}
	return bw.Flush()
}
