package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// bailianBench returns n Bailian lines: every line misses the Mooncake fast
// path, so each goes through the general JSONL scanner, and its timestamp
// is a decimal number of seconds.
func bailianBench(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"chat_id": %d, "parent_chat_id": -1, "timestamp": %d.%03d, "input_length": %d, "output_length": %d, "type": "text", "turn": 1, "hash_ids": [%d, %d, %d]}`+"\n",
			i, i/4, 250*(i%4), 33+i%16, 1+i%300, 3*i, 3*i+1, 3*i+2)
	}
	return b.Bytes()
}

// aiperfSingleBench returns n AIPerf single_turn rows with fractional
// millisecond timestamps, a third of them in sessions.
func aiperfSingleBench(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		if i%3 == 0 {
			fmt.Fprintf(&b, `{"text": "Question %d: what does a prefix cache keep?", "session_id": "s%d", "delay": 250, "output_length": 20}`+"\n", i, i%50)
			continue
		}
		fmt.Fprintf(&b, `{"text": "Question %d: what does a prefix cache keep?", "timestamp": %d.5, "output_length": 20}`+"\n", i, i)
	}
	return b.Bytes()
}

// aiperfMultiBench returns n AIPerf multi_turn sessions of three turns.
func aiperfMultiBench(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"session_id": "s%d", "turns": [{"text": "Hello %d", "timestamp": %d}, {"text": "And then?", "delay": 2000, "output_length": 50}, {"texts": [{"name": "q", "contents": ["Summarise", "this"]}], "delay": 500.25}]}`+"\n", i, i, 10*i)
	}
	return b.Bytes()
}

// wekaBench returns n copies of the first conversation of
// testdata/weka.jsonl (four requests, two sub-agents), each with its own id.
func wekaBench(tb testing.TB, n int) []byte {
	data, err := os.ReadFile("testdata/weka.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var b bytes.Buffer
	for i := range n {
		b.WriteString(strings.Replace(string(line), `"trace_0042"`, fmt.Sprintf(`"c%d"`, i), 1))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// countRows reads data to the end and returns how many rows it holds.
func countRows(data []byte, opts Options) (int, error) {
	r, err := NewReader("bench", bytes.NewReader(data), opts)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var row Row
	n := 0
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// TestBenchmarkDecoders checks that the inputs of the decoder benchmarks
// read without error to the rows they hold.
func TestBenchmarkDecoders(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		opts Options
		want int
	}{
		{"Bailian", bailianBench(300), Options{}, 300},
		{"AIPerfSingle", aiperfSingleBench(300), Options{Format: FormatAIPerfSingle}, 300},
		{"AIPerfMulti", aiperfMultiBench(100), Options{Format: FormatAIPerfMulti}, 300},
		{"Weka", wekaBench(t, 100), Options{}, 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, err := countRows(tt.data, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("%d rows, want %d", n, tt.want)
			}
		})
	}
}

// BenchmarkBailianDecode reads 20,000 Bailian lines through the general
// JSONL scanner.
func BenchmarkBailianDecode(b *testing.B) {
	benchRead(b, bailianBench(20000), Options{})
}

// BenchmarkAIPerfSingleDecode reads 20,000 AIPerf single_turn rows.
func BenchmarkAIPerfSingleDecode(b *testing.B) {
	benchRead(b, aiperfSingleBench(20000), Options{Format: FormatAIPerfSingle})
}

// BenchmarkAIPerfMultiDecode reads 5,000 AIPerf multi_turn sessions of
// three turns.
func BenchmarkAIPerfMultiDecode(b *testing.B) {
	benchRead(b, aiperfMultiBench(5000), Options{Format: FormatAIPerfMulti})
}

// BenchmarkWekaDecode reads 2,000 Weka conversations of five requests.
func BenchmarkWekaDecode(b *testing.B) {
	benchRead(b, wekaBench(b, 2000), Options{})
}

// parseFixedBench are the inputs of BenchmarkParseFixed: integers
// (lengths, millisecond timestamps), decimals (seconds), exponents and
// numbers with more digits than a uint64 holds.
var parseFixedBench = []struct {
	in    string
	scale int
}{
	{"1500", 0},
	{"1696512345000", 6},
	{"-42", 6},
	{"61.114", 9},
	{"0.25", 9},
	{"1500.5", 6},
	{"3.0", 9},
	{"1.5e3", 6},
	{"6758.0", 0},
	{"12345678901234567890.5", 0},
}

// TestBenchmarkParseFixed checks parseFixed on the inputs of
// BenchmarkParseFixed.
func TestBenchmarkParseFixed(t *testing.T) {
	want := []int64{1500, 1696512345000000000, -42000000, 61114000000, 250000000, 1500500000, 3000000000, 1500000000, 6758, 0}
	for i, tt := range parseFixedBench {
		got, st := parseFixed([]byte(tt.in), tt.scale)
		if i == len(parseFixedBench)-1 {
			if st != fixedRange {
				t.Errorf("parseFixed(%q, %d) status %d, want fixedRange", tt.in, tt.scale, st)
			}
			continue
		}
		if got != want[i] || st != fixedOK {
			t.Errorf("parseFixed(%q, %d) = %d, %d; want %d, fixedOK", tt.in, tt.scale, got, st, want[i])
		}
	}
}

// BenchmarkParseFixed parses each input of parseFixedBench once per
// iteration.
func BenchmarkParseFixed(b *testing.B) {
	in := make([][]byte, len(parseFixedBench))
	for i, tt := range parseFixedBench {
		in[i] = []byte(tt.in)
	}
	b.ReportAllocs()
	var sum int64
	for b.Loop() {
		for i, v := range in {
			n, _ := parseFixed(v, parseFixedBench[i].scale)
			sum += n
		}
	}
	fixedSink = sum
}

// fixedSink keeps BenchmarkParseFixed's results live.
var fixedSink int64
