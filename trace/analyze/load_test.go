package analyze

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// loadMooncake is a deliberately simple, independent loader (encoding/json)
// for the Mooncake files, used as an oracle against the trace package.
func loadMooncake(t testing.TB, path string) []trace.Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []trace.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var v struct {
			Timestamp    int64    `json:"timestamp"`
			InputLength  int      `json:"input_length"`
			OutputLength int      `json:"output_length"`
			HashIDs      []uint64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s:%d: %v", path, len(rows)+1, err)
		}
		rows = append(rows, trace.Row{
			Index: int64(len(rows)), Line: int64(len(rows) + 1),
			Offset: time.Duration(v.Timestamp) * time.Millisecond, HasOffset: true,
			InputTokens: v.InputLength, OutputTokens: v.OutputLength,
			ParentID: -1, RequestID: -1, BlockSize: 512, HashIDs: v.HashIDs,
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// loadAzure reads an Azure 2023 CSV (TIMESTAMP,ContextTokens,GeneratedTokens)
// with offsets re-based to the first row.
func loadAzure(t testing.TB, path string) []trace.Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	if _, err := cr.Read(); err != nil {
		t.Fatal(err)
	}
	var rows []trace.Row
	var first time.Time
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ts, err := time.Parse("2006-01-02 15:04:05.9999999", rec[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			first = ts
		}
		in, err1 := strconv.Atoi(rec[1])
		out, err2 := strconv.Atoi(rec[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %q", path, rec)
		}
		rows = append(rows, trace.Row{
			Index: int64(len(rows)), Line: int64(len(rows) + 2),
			Offset: ts.Sub(first), HasOffset: true,
			InputTokens: in, OutputTokens: out, ParentID: -1, RequestID: -1,
		})
	}
	return rows
}

// loadSplitwise reads a Vidur/Splitwise CSV (arrived_at seconds, prefill,
// decode tokens).
func loadSplitwise(t testing.TB, path string) []trace.Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	if _, err := cr.Read(); err != nil {
		t.Fatal(err)
	}
	var rows []trace.Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sec, err0 := strconv.ParseFloat(rec[0], 64)
		in, err1 := strconv.Atoi(rec[1])
		out, err2 := strconv.Atoi(rec[2])
		if err0 != nil || err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %q", path, rec)
		}
		rows = append(rows, trace.Row{
			Index: int64(len(rows)), Line: int64(len(rows) + 2),
			Offset: time.Duration(math.Round(sec * 1e9)), HasOffset: true,
			InputTokens: in, OutputTokens: out, ParentID: -1, RequestID: -1,
		})
	}
	return rows
}
