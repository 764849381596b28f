package synth

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

var update = flag.Bool("update", false, "rewrite golden files")

// conversation caches the Mooncake conversation trace across tests.
var conversationRows []trace.Row

func conversation(t testing.TB) []trace.Row {
	t.Helper()
	if conversationRows == nil {
		rows, _, err := trace.ReadAll(testfiles.Trace(t, "mooncake/conversation_trace.jsonl"), trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		conversationRows = rows
	}
	return conversationRows
}

// encode writes res and returns the bytes.
func encode(t testing.TB, res *Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readBack reads JSONL bytes with the trace reader, in file order.
func readBack(t testing.TB, data []byte, f trace.Format, blockSize int) []trace.Row {
	t.Helper()
	rd, err := trace.NewReader("out.jsonl", bytes.NewReader(data), trace.Options{Format: f, BlockSize: blockSize})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var rows []trace.Row
	var row trace.Row
	for {
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row.Clone())
	}
}

// analyzeBytes runs analyze-trace's File on the bytes, as the command
// would on the written file.
func analyzeBytes(t testing.TB, data []byte, blockSize int, sizes []int64) *analyze.Report {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := analyze.File(context.Background(), p, analyze.FileConfig{
		Analyzer: analyze.Config{BlockSize: blockSize, CacheSizes: sizes},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// contextsReport is the analyzer's report of the contexts a replay sends
// for the written bytes: for Mooncake output, whose later session turns
// hold only their new tokens, the rows read back rebuilt with Contexts;
// for Bailian, the file itself.
func contextsReport(t testing.TB, data []byte, res *Result, sizes []int64) *analyze.Report {
	t.Helper()
	if res.Format != trace.FormatMooncake {
		return analyzeBytes(t, data, res.BlockSize, sizes)
	}
	return Measure(Contexts(readBack(t, data, res.Format, res.BlockSize)), res.BlockSize, sizes)
}

// checkChained fails unless every hash id sits at one position after one
// predecessor, and every row's id count fits its length.
func checkChained(t testing.TB, rows []trace.Row) {
	t.Helper()
	type place struct {
		pos  int
		prev uint64
		root bool
	}
	seen := map[uint64]place{}
	for i := range rows {
		r := &rows[i]
		k := len(r.HashIDs)
		if k == 0 {
			continue
		}
		B := r.BlockSize
		if !((k-1)*B < r.InputTokens && r.InputTokens <= k*B) {
			t.Fatalf("row %d: %d ids for %d tokens at block size %d", i, k, r.InputTokens, B)
		}
		for j, id := range r.HashIDs {
			p := place{pos: j, root: j == 0}
			if j > 0 {
				p.prev = r.HashIDs[j-1]
			}
			if q, ok := seen[id]; ok && q != p {
				t.Fatalf("row %d: id %d at position %d after %d, earlier at %d after %d", i, id, j, p.prev, q.pos, q.prev)
			}
			seen[id] = p
		}
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
