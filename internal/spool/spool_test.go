package spool

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// What is read through a Spool reads back the same, as often as asked and
// concurrently; the temporary file has no name from the start, so a crash
// (kill -9) leaves nothing behind, and Close releases it.
func TestSpoolReadsBackWithoutAName(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 10000)
	s, err := New(bytes.NewReader(data), Config{Dir: dir, Max: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("the spool file has a name in %s: %v", dir, names)
	}
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read through: %d bytes, err %v; want the %d bytes of the source", len(got), err, len(data))
	}
	if s.Size() != int64(len(data)) {
		t.Errorf("Size %d, want %d", s.Size(), len(data))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r, err := s.Reopen()
			if err != nil {
				t.Error(err)
				return
			}
			if again, err := io.ReadAll(r); err != nil || !bytes.Equal(again, data) {
				t.Errorf("reopened: %d bytes, err %v", len(again), err)
			}
		})
	}
	wg.Wait()
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("files left in %s: %v", dir, names)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reopen(); err == nil {
		t.Error("Reopen after Close works")
	}
}

// Over its cap a Spool fails the read with ErrFull and a message that
// says how much it keeps; it never writes more than the cap.
func TestSpoolCap(t *testing.T) {
	s, err := New(strings.NewReader(strings.Repeat("x", 5000)), Config{Dir: t.TempDir(), Max: 4096, What: "standard input"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = io.ReadAll(s)
	if !errors.Is(err, ErrFull) {
		t.Fatalf("error %v, want ErrFull", err)
	}
	for _, want := range []string{"standard input", "4096 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if s.Size() > 4096 {
		t.Errorf("kept %d bytes over the 4096-byte cap", s.Size())
	}
}

// With Drop, a Spool over its cap lets the stream through and gives up
// the copy: Reopen then says so.
func TestSpoolDrop(t *testing.T) {
	data := strings.Repeat("y", 5000)
	s, err := New(strings.NewReader(data), Config{Dir: t.TempDir(), Max: 4096, Drop: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := io.ReadAll(s)
	if err != nil || string(got) != data {
		t.Fatalf("read %d bytes, err %v; want the whole stream", len(got), err)
	}
	if !s.Dropped() {
		t.Error("Dropped is false over the cap")
	}
	if _, err := s.Reopen(); !errors.Is(err, ErrFull) {
		t.Errorf("Reopen after a drop: %v, want ErrFull", err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
