package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/testfiles"
)

// loopReader serves the same content over and over, so a Reader can be
// driven for as many rows as a test needs.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	if l.off == len(l.data) {
		l.off = 0
	}
	n := copy(p, l.data[l.off:])
	l.off += n
	return n, nil
}

// TestNextAllocs is the allocation budget of the Mooncake hot path:
// steady-state Next on plain rows allocates nothing.
func TestNextAllocs(t *testing.T) {
	data := testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl")
	r, err := NewReader("conversation_trace.jsonl", &loopReader{data: data}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var row Row
	// Warm up: grow HashIDs to the longest row and the line buffers.
	for range 20000 {
		if err := r.Next(&row); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(5000, func() {
		if err := r.Next(&row); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %v times per plain Mooncake row, want 0", allocs)
	}
}

// TestNextAllocsBailian: Bailian rows of a known session cost no
// allocation either (new sessions cost one string and a map entry).
func TestNextAllocsBailian(t *testing.T) {
	line := []byte(`{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 40, "output_length": 3, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]}` + "\n")
	r, err := NewReader("b.jsonl", &loopReader{data: line}, Options{Format: FormatBailian})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var row Row
	for range 100 {
		if err := r.Next(&row); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.Next(&row); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %v times per Bailian row, want 0", allocs)
	}
}

// decodeAll counts rows and sums lengths; shared by the benchmark and its
// correctness test.
func decodeAll(data []byte) (rows, in, out, ids int64, err error) {
	r, err := NewReader("conversation_trace.jsonl", bytes.NewReader(data), Options{})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer r.Close()
	var row Row
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows, in, out, ids, nil
		}
		if err != nil {
			return 0, 0, 0, 0, err
		}
		rows++
		in += int64(row.InputTokens)
		out += int64(row.OutputTokens)
		ids += int64(len(row.HashIDs))
	}
}

func TestBenchmarkMooncakeDecode(t *testing.T) {
	data := testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl")
	rows, in, out, _, err := decodeAll(data)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 12031 || in != 144793823 || out != 4122048 {
		t.Errorf("decodeAll = %d rows, %d in, %d out; want 12031, 144793823, 4122048", rows, in, out)
	}
	srows, sin, sout, sids, err := decodeStdlib(data)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, ids, _ := decodeAll(data)
	if srows != rows || sin != in || sout != out || sids != ids {
		t.Errorf("encoding/json baseline disagrees: %d/%d/%d/%d vs %d/%d/%d/%d", srows, sin, sout, sids, rows, in, out, ids)
	}
}

// decodeStdlib is the encoding/json baseline for BenchmarkMooncakeDecode.
func decodeStdlib(data []byte) (rows, in, out, ids int64, err error) {
	var v struct {
		Timestamp    float64  `json:"timestamp"`
		InputLength  int      `json:"input_length"`
		OutputLength int      `json:"output_length"`
		HashIDs      []uint64 `json:"hash_ids"`
	}
	for line := range bytes.Lines(data) {
		v.HashIDs = v.HashIDs[:0]
		if err := json.Unmarshal(line, &v); err != nil {
			return 0, 0, 0, 0, err
		}
		rows++
		in += int64(v.InputLength)
		out += int64(v.OutputLength)
		ids += int64(len(v.HashIDs))
	}
	return rows, in, out, ids, nil
}

// BenchmarkMooncakeDecodeStdlib is the encoding/json baseline: compare its
// rows/s with BenchmarkMooncakeDecode from the same run.
func BenchmarkMooncakeDecodeStdlib(b *testing.B) {
	data := testfiles.TraceBytes(b, "mooncake/conversation_trace.jsonl")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rows int64
	cpu0 := cpuTime()
	for b.Loop() {
		n, _, _, _, err := decodeStdlib(data)
		if err != nil {
			b.Fatal(err)
		}
		rows += n
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

// BenchmarkMooncakeDecode measures the Mooncake reader on the real
// conversation trace (12,031 rows, 3 MB) held in memory.
func BenchmarkMooncakeDecode(b *testing.B) {
	data := testfiles.TraceBytes(b, "mooncake/conversation_trace.jsonl")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rows int64
	cpu0 := cpuTime()
	for b.Loop() {
		n, _, _, _, err := decodeAll(data)
		if err != nil {
			b.Fatal(err)
		}
		rows += n
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

// cpuTime is the process's user+system CPU time. On a shared machine
// rows per CPU second is steadier than rows per wall second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
