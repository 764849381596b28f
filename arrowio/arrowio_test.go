package arrowio

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/record"
)

// base is a fixed Unix ns start time with non-zero sub-microsecond digits,
// so truncation to µs anywhere would show.
const base = int64(1_763_700_000_123_456_789)

// genRequests returns n realistic, internally consistent requests: the
// derived latencies agree with the timeline, absent values use the record
// package's conventions, and every nullable column gets nulls.
func genRequests(n int, seed uint64) []record.Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	finish := []string{"stop", "length", "tool_calls"}
	out := make([]record.Request, n)
	for i := range out {
		r := &out[i]
		r.RequestID = uint64(i)
		r.TraceRow = int64(i)
		if i%17 == 0 {
			r.TraceRow = -1
		}
		r.SessionID = fmt.Sprintf("sess-%d", i/4)
		if i%11 == 0 {
			r.SessionID = ""
		}
		r.Turn = int32(i % 4)
		if i < n/20 {
			r.Phase = record.PhaseWarmup
		}
		r.SenderID = int32(i % 64)
		r.IntendedNS = base + int64(i)*1_000_000 + rng.Int64N(1000)
		r.DispatchedNS = r.IntendedNS + 1_000 + rng.Int64N(50_000)
		r.LatenessNS = r.DispatchedNS - r.IntendedNS
		r.SentNS = r.DispatchedNS + 2_000 + rng.Int64N(10_000)
		r.WroteNS = r.SentNS + 30_000
		r.InputTokens = 100 + rng.Int32N(4000)
		r.MaxTokens = 0
		if i%3 == 0 {
			r.MaxTokens = 256
		}
		r.BytesSent = int64(r.InputTokens) * 4
		r.ServerPromptTokens, r.ServerCompletionTokens, r.ServerReasoningTokens = -1, -1, -1
		r.ServerCachedTokens, r.ExpectedCachedTokens = -1, -1
		r.SessionDelayNS = 0
		if r.Turn > 0 {
			r.SessionDelayNS = rng.Int64N(1_000_000)
		}
		switch {
		case i%50 == 7: // connection refused: no response at all
			r.ErrorKind = record.ErrConnect
			r.ErrorMessage = "dial tcp 127.0.0.1:8000: connect: connection refused"
			r.EndNS = r.SentNS + 200_000
		case i%50 == 13: // HTTP 429
			r.HeadersNS = r.WroteNS + 1_000_000
			r.StatusCode = 429
			r.ErrorKind = record.ErrHTTPStatus
			r.ErrorMessage = "429 Too Many Requests"
			r.EndNS = r.HeadersNS + 10_000
			r.BytesReceived = 120
		default:
			r.StatusCode = 200
			r.ConnReused = i%5 != 0
			if !r.ConnReused {
				r.DNSNS = 20_000
				r.ConnectNS = 80_000 + rng.Int64N(40_000)
			}
			r.BlockedNS = rng.Int64N(3_000)
			r.HeadersNS = r.WroteNS + 5_000_000 + rng.Int64N(10_000_000)
			r.FirstEventNS = r.HeadersNS + 1_000
			r.FirstTokenNS = r.FirstEventNS + 2_000
			r.OutputTokens = 1 + rng.Int32N(500)
			if i%9 == 0 {
				r.ReasoningTokens = 1 + rng.Int32N(100)
			}
			r.FirstOutputTokenNS = r.FirstTokenNS + int64(r.ReasoningTokens)*20_000
			osl := r.OutputTokens + r.ReasoningTokens
			r.LastTokenNS = r.FirstTokenNS + int64(osl-1)*20_000 + rng.Int64N(1000)
			if osl > 1 {
				r.SecondTokenNS = r.FirstTokenNS + 20_000
				r.TTSTNS = r.SecondTokenNS - r.FirstTokenNS
				r.ITLNS = float64(r.LastTokenNS-r.FirstTokenNS) / float64(osl-1)
			}
			r.EndNS = r.LastTokenNS + 50_000
			r.TTFTNS = r.FirstTokenNS - r.SentNS
			r.TTFONS = r.FirstOutputTokenNS - r.SentNS
			r.E2ENS = r.LastTokenNS - r.SentNS
			r.LatencyFromIntendedNS = r.LastTokenNS - r.IntendedNS
			r.Events = osl + 2
			r.ContentEvents = osl
			r.Reads = osl/2 + 1
			r.MaxEventsRead = 3
			r.BytesReceived = int64(r.Events) * 180
			r.FinishReason = finish[i%len(finish)]
			if i%2 == 0 {
				r.ServerPromptTokens = r.InputTokens
				r.ServerCompletionTokens = osl
				r.ServerReasoningTokens = r.ReasoningTokens
				r.ServerCachedTokens = r.InputTokens / 2
				r.ExpectedCachedTokens = r.InputTokens/2 + 16
			}
			if i%7 == 0 {
				r.AdapterNS = 1_500
			}
		}
	}
	return out
}

func genEvents(n int, seed uint64) []record.Event {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]record.Event, n)
	t := base
	for i := range out {
		t += 1 + rng.Int64N(40_000)
		out[i] = record.Event{
			RequestID: uint64(i / 100), Seq: int32(i % 100), TimeNS: t,
			Kind: record.EventKind(i % 8), Tokens: int32(i%3) - 1, Bytes: int32(100 + i%50), EventsInRead: 1 + int32(i%3),
		}
	}
	return out
}

// writeRun writes reqs and evs with cfg in batches of batch rows.
func writeRun(t testing.TB, dir string, cfg Config, reqs []record.Request, evs []record.Event, batch int) Stats {
	t.Helper()
	w, err := NewRunWriter(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(reqs); i += batch {
		if err := w.WriteRequests(reqs[i:min(i+batch, len(reqs))]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(evs); i += batch {
		if err := w.WriteEvents(evs[i:min(i+batch, len(evs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Stats()
}

func TestRoundTrip(t *testing.T) {
	reqs := genRequests(5000, 1)
	evs := genEvents(12345, 2)
	for _, tc := range []struct {
		name      string
		cfg       Config
		wantFiles []string // relative, of the records table
	}{
		{"parquet parts", Config{RowGroupRows: 1000, PartRows: 2000, Metadata: map[string]string{"reprise.version": "test"}},
			[]string{"records/part-00000.parquet", "records/part-00001.parquet", "records/part-00002.parquet"}},
		{"parquet single file", Config{RowGroupRows: 1000, SingleFile: true}, []string{"records.parquet"}},
		{"arrow parts", Config{Format: FormatArrow, RowGroupRows: 1000, PartRows: 3000, Metadata: map[string]string{"reprise.version": "test"}},
			[]string{"records/part-00000.arrow", "records/part-00001.arrow"}},
		{"arrow single file", Config{Format: FormatArrow, SingleFile: true}, []string{"records.arrow"}},
		{"jsonl", Config{Format: FormatJSONL, RowGroupRows: 1000, PartRows: 2000}, []string{"records.jsonl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := writeRun(t, dir, tc.cfg, reqs, evs, 333)
			if st.RequestsWritten != int64(len(reqs)) || st.EventsWritten != int64(len(evs)) || st.RequestsDropped+st.EventsDropped != 0 {
				t.Errorf("stats = %+v", st)
			}
			files, err := TableFiles(dir, RecordsTable)
			if err != nil {
				t.Fatal(err)
			}
			for i := range files {
				files[i], _ = filepath.Rel(dir, files[i])
			}
			if diff := cmp.Diff(tc.wantFiles, files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			assertNoTmp(t, dir)
			got, err := ReadRequests(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(reqs, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			gotEv, err := ReadEvents(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(evs, gotEv); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func assertNoTmp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.HasSuffix(p, tmpSuffix) {
			t.Errorf("left a temporary file: %s", p)
		}
		return nil
	})
}

func TestEmptyRun(t *testing.T) {
	for _, f := range []Format{FormatParquet, FormatArrow} {
		dir := t.TempDir()
		w, err := NewRunWriter(dir, Config{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRequests(dir)
		if err != nil || len(got) != 0 {
			t.Errorf("%s: ReadRequests = %d rows, %v; want an empty, readable table", f, len(got), err)
		}
		if _, err := ReadEvents(dir); !errors.Is(err, ErrNoTable) {
			t.Errorf("%s: events without any event: err = %v, want ErrNoTable", f, err)
		}
	}
}

// TestPartRowsExact: a part is completed at exactly PartRows rows, also
// when that is not a whole number of row groups (or less than one), so the
// rows are on disk without waiting for a row group to fill.
func TestPartRowsExact(t *testing.T) {
	dir := t.TempDir()
	w, err := NewRunWriter(dir, Config{PartRows: 300, PartInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	reqs := genRequests(1000, 3)
	if err := w.WriteRequests(reqs); err != nil {
		t.Fatal(err)
	}
	// Wait (without timing assertions) for the three full parts, which
	// must be complete before Close although the row group (32,768 rows)
	// never fills.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if files, _ := TableFiles(dir, RecordsTable); len(files) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("three parts of 300 rows not complete after a minute")
		}
	}
	got, err := ReadRequests(dir)
	if err != nil || len(got) != 900 {
		t.Fatalf("before Close: %d rows (%v), want 900", len(got), err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := TableFiles(dir, RecordsTable)
	var sizes []int
	for _, f := range files {
		n := 0
		if err := ReadFile(f, func(rec arrow.Record) error { n += int(rec.NumRows()); return nil }); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	if diff := cmp.Diff([]int{300, 300, 300, 100}, sizes); diff != "" {
		t.Errorf("rows per part (-want +got):\n%s", diff)
	}
}

func TestPartInterval(t *testing.T) {
	dir := t.TempDir()
	w, err := NewRunWriter(dir, Config{PartInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reqs := genRequests(30, 3)
	if err := w.WriteRequests(reqs[:10]); err != nil {
		t.Fatal(err)
	}
	// Wait (without timing assertions) until the first part is complete:
	// it must happen although the row group is far from full.
	for {
		if files, _ := TableFiles(dir, RecordsTable); len(files) == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	got, err := ReadRequests(dir)
	if err != nil || len(got) != 10 {
		t.Fatalf("after the interval: %d rows, %v; want the first 10 rows in a complete part", len(got), err)
	}
	if err := w.WriteRequests(reqs[10:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err = ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reqs, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestWriteAfterClose: rows handed over after Close are refused with
// ErrClosed; Close may be called again.
func TestWriteAfterClose(t *testing.T) {
	w, err := NewRunWriter(t.TempDir(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Close(), w.Close()); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRequests(genRequests(3, 4)); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v, want ErrClosed", err)
	}
	if err := w.WriteEvents(genEvents(3, 4)); !errors.Is(err, ErrClosed) {
		t.Errorf("events after close: %v, want ErrClosed", err)
	}
}

func TestConcurrentWriters(t *testing.T) {
	// Hammer: P goroutines released together each write N batches.
	dir := t.TempDir()
	w, err := NewRunWriter(dir, Config{RowGroupRows: 500, PartRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	const P, N, B = 8, 50, 10
	all := genRequests(P*N*B, 5)
	start := make(chan struct{})
	errc := make(chan error, P)
	for p := 0; p < P; p++ {
		go func() {
			<-start
			for n := 0; n < N; n++ {
				i := (p*N + n) * B
				if err := w.WriteRequests(all[i : i+B]); err != nil {
					errc <- err
					return
				}
				if err := w.WriteEvents(genEvents(B, uint64(i))); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	close(start)
	for p := 0; p < P; p++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].RequestID < got[j].RequestID })
	if diff := cmp.Diff(all, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	ev, err := ReadEvents(dir)
	if err != nil || len(ev) != P*N*B {
		t.Errorf("events: %d rows, %v; want %d", len(ev), err, P*N*B)
	}
}

func TestUnknownErrorKind(t *testing.T) {
	dir := t.TempDir()
	reqs := genRequests(3, 6)
	reqs[1].ErrorKind = "brand_new_kind"
	st := writeRun(t, dir, Config{}, reqs, nil, 10)
	if st.UnknownErrorKinds != 1 {
		t.Errorf("UnknownErrorKinds = %d, want 1", st.UnknownErrorKinds)
	}
	got, err := ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got[1].ErrorKind != "unknown" {
		t.Errorf("kind = %q, want unknown", got[1].ErrorKind)
	}
}

func TestAppendRequestAllocs(t *testing.T) {
	b := newRequestBuilder(memory.DefaultAllocator)
	defer b.release()
	reqs := genRequests(64, 7)
	b.reserve(2000)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		b.appendRequest(&reqs[i%len(reqs)])
		i++
	})
	if allocs != 0 {
		t.Errorf("appendRequest allocates %v times per row, want 0", allocs)
	}
}

func TestAppendEventAllocs(t *testing.T) {
	b := newEventBuilder(memory.DefaultAllocator)
	defer b.release()
	evs := genEvents(64, 8)
	b.reserve(2000)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		b.appendEvent(&evs[i%len(evs)])
		i++
	})
	if allocs != 0 {
		t.Errorf("appendEvent allocates %v times per row, want 0", allocs)
	}
}

func TestWriteRequestsAllocs(t *testing.T) {
	// The collector's side of the sink: appending a batch that completes
	// no row group allocates nothing (8,008 rows, row groups of 32,768).
	w, err := NewRunWriter(t.TempDir(), Config{PartInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	reqs := genRequests(8, 9)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := w.WriteRequests(reqs); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("WriteRequests allocates %v times per batch, want 0", allocs)
	}
}

func TestConfigValidate(t *testing.T) {
	err := Config{Format: "csv", RowGroupRows: -1, PartRows: -2, QueueBatches: -3}.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad config")
	}
	for _, want := range []string{"csv", "row group rows", "part rows", "queue batches"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if err := NewConfig().Validate(); err != nil {
		t.Errorf("NewConfig().Validate() = %v", err)
	}
}

// TestTableWriterRollsFullOldPart: a write that fills a part that is also
// older than PartInterval completes it once (regression: the age check ran
// on the already completed part).
func TestTableWriterRollsFullOldPart(t *testing.T) {
	dir := t.TempDir()
	w, err := NewTableWriter(dir, "t", RecordsSchema(), Config{RowGroupRows: 10, PartRows: 20, PartInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	b := newRequestBuilder(bufferPool)
	defer b.release()
	reqs := genRequests(45, 1)
	for _, n := range []int{20, 25} {
		b.reserve(n)
		for i := 0; i < n; i++ {
			b.appendRequest(&reqs[i])
		}
		rec := b.newRecord()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := TableFiles(dir, "t")
	if err != nil || len(files) != 3 || w.Stats().Rows != 45 {
		t.Errorf("files %v (%v), rows %d; want 3 parts (20, 20, 5 rows), 45 rows", files, err, w.Stats().Rows)
	}
}

// TestWriteReturnsWhenWritten: the writer has no queue of its own: when
// WriteRequests returns, its rows are in the table, and a part it
// completed is on disk, complete.
func TestWriteReturnsWhenWritten(t *testing.T) {
	dir := t.TempDir()
	w, err := NewRunWriter(dir, Config{RowGroupRows: 50, PartRows: 100, PartInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	reqs := genRequests(250, 8)
	for i := 0; i < len(reqs); i += 50 {
		if err := w.WriteRequests(reqs[i : i+50]); err != nil {
			t.Fatal(err)
		}
		wantParts := (i + 50) / 100
		got, err := ReadRequests(dir)
		if wantParts == 0 {
			if !errors.Is(err, ErrNoTable) {
				t.Fatalf("after %d rows: %d readable (%v), want none yet", i+50, len(got), err)
			}
			continue
		}
		if err != nil || len(got) != wantParts*100 {
			t.Fatalf("after %d rows: %d readable (%v), want the %d rows of %d complete parts", i+50, len(got), err, wantParts*100, wantParts)
		}
		if st := w.Stats(); st.RequestsWritten != int64(i+50) {
			t.Fatalf("after %d rows: %d written", i+50, st.RequestsWritten)
		}
	}
}
