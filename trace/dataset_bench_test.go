package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// shareGPTBench returns a ShareGPT array of n conversations of two pairs,
// pretty-printed as the ShareGPT_V3 file is.
func shareGPTBench(n int) []byte {
	var b bytes.Buffer
	b.WriteString("[\n")
	reply := strings.Repeat("The paged attention kernel reads KV blocks. ", 20)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  {\n    \"id\": \"c%d\",\n    \"conversations\": [\n", i)
		fmt.Fprintf(&b, "      {\"from\": \"human\", \"value\": \"Question %d: how does a prefix cache help long chats?\"},\n", i)
		fmt.Fprintf(&b, "      {\"from\": \"gpt\", \"value\": %q},\n", reply)
		b.WriteString("      {\"from\": \"human\", \"value\": \"And with many users?\"},\n")
		fmt.Fprintf(&b, "      {\"from\": \"gpt\", \"value\": %q}\n    ]\n  }", reply)
	}
	b.WriteString("\n]\n")
	return b.Bytes()
}

func benchRead(b *testing.B, data []byte, opts Options) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		r, err := NewReader("bench", bytes.NewReader(data), opts)
		if err != nil {
			b.Fatal(err)
		}
		var row Row
		for {
			err := r.Next(&row)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		r.Close()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkShareGPT reads a ShareGPT array of 2,000 two-turn conversations
// (every turn, reply lengths counted as words).
func BenchmarkShareGPT(b *testing.B) {
	benchRead(b, shareGPTBench(2000), Options{Sessions: true})
}

// BenchmarkParquetTable reads a Parquet table of 20,000 prompts.
func BenchmarkParquetTable(b *testing.B) {
	texts := make([]string, 20000)
	lens := make([]int64, len(texts))
	for i := range texts {
		texts[i] = fmt.Sprintf("Prompt %d: explain how speculative decoding keeps the output distribution.", i)
		lens[i] = int64(64 + i%64)
	}
	data, err := parquetBytes(texts, lens)
	if err != nil {
		b.Fatal(err)
	}
	benchRead(b, data, Options{Format: FormatTable})
}
