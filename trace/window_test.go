package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// windowTrace writes n Mooncake rows (a few with extension content) to a
// file and returns its path and ReadAll's rows.
func windowTrace(t testing.TB, n int) (string, []Row) {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 3, "hash_ids": [%d, %d]`, i*7, 600+i%400, 2*i, 2*i+1)
		if i%5 == 0 {
			fmt.Fprintf(&b, `, "extra": {"row": %d}`, i)
		}
		b.WriteString("}\n")
	}
	path := filepath.Join(t.TempDir(), "w.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadAll(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return path, rows
}

func openFunc(path string) func() (*Reader, error) {
	return func() (*Reader, error) { return Open(path, Options{}) }
}

// TestWindowMatchesReadAll: every position of a window smaller than the
// trace, over three passes of a wrapped window that starts inside the
// trace, holds exactly ReadAll's row First + (p − First) mod Count.
func TestWindowMatchesReadAll(t *testing.T) {
	path, rows := windowTrace(t, 500)
	const first, count = 40, 400
	w := NewWindow(WindowConfig{Open: openFunc(path), First: first, Count: count, Wrap: true, Size: 64})
	defer w.Close()
	for p := int64(first); p < first+3*count; p++ {
		got := w.Row(p)
		if got == nil {
			t.Fatalf("position %d: nil (%v)", p, w.Err())
		}
		want := &rows[w.Index(p)]
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("position %d: %+v, want row %d %+v", p, got, w.Index(p), want)
		}
		w.Release(p)
	}
	if w.Row(first-1) != nil || w.Row(-1) != nil {
		t.Error("a position before First has a row")
	}
	if err := w.Close(); err != nil || w.Err() != nil {
		t.Errorf("Close %v, Err %v", err, w.Err())
	}
}

// TestWindowHoldsUntilReleased: the reader never overwrites a position
// that is not released, or released but pinned; a released position's
// row is gone once the reader needs its slot.
func TestWindowHoldsUntilReleased(t *testing.T) {
	path, rows := windowTrace(t, 100)
	w := NewWindow(WindowConfig{Open: openFunc(path), Count: 100, Size: 8})
	defer w.Close()
	for p := range int64(8) {
		if w.Row(p) == nil {
			t.Fatalf("position %d not read", p)
		}
	}
	// The ring is full: position 8 waits for position 0's slot.
	got := make(chan *Row)
	go func() { got <- w.Row(8) }()
	select {
	case <-got:
		t.Fatal("position 8 read over unreleased position 0")
	case <-time.After(50 * time.Millisecond):
	}
	if w.Pin(0) == nil {
		t.Fatal("Pin(0) failed on a held position")
	}
	w.Release(0)
	w.Release(0) // idempotent
	select {
	case <-got:
		t.Fatal("position 8 read over pinned position 0")
	case <-time.After(50 * time.Millisecond):
	}
	if r := w.Row(0); r == nil || r.Index != rows[0].Index {
		t.Fatal("pinned position 0 lost its row")
	}
	w.Unpin(0)
	if r := <-got; r == nil || !reflect.DeepEqual(r, &rows[8]) {
		t.Fatalf("position 8: %+v", r)
	}
	if w.Row(0) != nil || w.Pin(0) != nil {
		t.Error("position 0 still readable after its slot was reused")
	}
	if w.Pin(1) == nil {
		t.Fatal("Pin(1)")
	}
	w.Release(1)
	w.Unpin(1)
	if w.Pin(2) == nil {
		t.Fatal("Pin(2)")
	}
	w.Release(2)
	if w.Pin(2) != nil {
		t.Error("Pin of a released position succeeded")
	}
	w.Unpin(2)
	if w.Row(100) != nil {
		t.Error("a position past the end of an unwrapped window has a row")
	}
}

// TestWindowChangedTrace: a trace that lost rows since the window was
// made, or cannot be opened, stops the reader with an error; the
// positions it read are still there and the rest are nil.
func TestWindowChangedTrace(t *testing.T) {
	path, _ := windowTrace(t, 50)
	w := NewWindow(WindowConfig{Open: openFunc(path), Count: 60, Size: 100})
	defer w.Close()
	if w.Row(49) == nil {
		t.Fatal("position 49")
	}
	if w.Row(50) != nil {
		t.Fatal("position 50 of a 50-row trace")
	}
	if err := w.Err(); !errors.Is(err, errChanged) {
		t.Errorf("Err = %v, want the trace changed", err)
	}
	bad := errors.New("gone")
	w2 := NewWindow(WindowConfig{Open: func() (*Reader, error) { return nil, bad }, Count: 1})
	if w2.Row(0) != nil || !errors.Is(w2.Err(), bad) {
		t.Errorf("unopenable trace: Err %v", w2.Err())
	}
	w2.Close()
	// Closed before it started: nothing runs, Row returns nil.
	w3 := NewWindow(WindowConfig{Open: openFunc(path), Count: 50})
	w3.Close()
	if w3.Row(0) != nil {
		t.Error("a window closed before it started read a row")
	}
}

// TestWindowHammer: a dispatcher takes positions in order, builders pin
// positions ahead of it, senders read and release what the dispatcher
// handed them, out of order; every row read equals ReadAll's. Run with
// -race.
func TestWindowHammer(t *testing.T) {
	path, rows := windowTrace(t, 3000)
	w := NewWindow(WindowConfig{Open: openFunc(path), Count: 3000, Wrap: true, Size: 256})
	defer w.Close()
	const total = 9000
	check := func(p int64, r *Row) {
		if r == nil {
			t.Errorf("position %d: nil (%v)", p, w.Err())
			return
		}
		if want := &rows[w.Index(p)]; r.Index != want.Index || !reflect.DeepEqual(r.HashIDs, want.HashIDs) || !bytes.Equal(r.Raw, want.Raw) {
			t.Errorf("position %d: row %d, want %d", p, r.Index, want.Index)
		}
	}
	var high atomic.Int64 // positions below are dispatched
	var wg sync.WaitGroup
	for b := range 3 { // builders
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(b), 1))
			for high.Load() < total {
				p := high.Load() + int64(rng.IntN(128))
				if r := w.Pin(p); r != nil {
					check(p, r)
					w.Unpin(p)
				}
			}
		})
	}
	jobs := make(chan int64, 64)
	for range 4 { // senders
		wg.Go(func() {
			for p := range jobs {
				check(p, w.Row(p))
				w.Release(p)
				w.Release(p) // the scheduler releases again after Handle
			}
		})
	}
	for p := range int64(total) { // the dispatcher
		r := w.Row(p)
		check(p, r)
		jobs <- p
		high.Store(p + 1)
	}
	close(jobs)
	wg.Wait()
}

// TestWindowRowAllocs: reading rows that are there allocates nothing.
func TestWindowRowAllocs(t *testing.T) {
	path, _ := windowTrace(t, 100)
	w := NewWindow(WindowConfig{Open: openFunc(path), Count: 100, Size: 16})
	defer w.Close()
	for p := range int64(16) {
		w.Row(p)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for p := range int64(16) {
			if w.Row(p) == nil {
				t.Fatal("nil")
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Row allocates %v", allocs)
	}
}
