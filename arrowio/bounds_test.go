package arrowio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunFilesRegularOnly: manifest.json and summary.json that are not
// regular files (a FIFO, which would block the read forever; a symbolic
// link to /dev/zero, which never ends) or are larger than any run writes
// are refused at once, not read.
func TestRunFilesRegularOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"too large", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, MaxJSONFileBytes+1); err != nil { // sparse
				t.Fatal(err)
			}
		}, "not a file reprise wrote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(t, filepath.Join(dir, ManifestFile))
			tc.make(t, filepath.Join(dir, SummaryFile))
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Manifest(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Manifest: %v, want %q", err, tc.want)
			}
			if _, err := r.Summary(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Summary: %v, want %q", err, tc.want)
			}
			if _, err := r.Settings(); err == nil {
				t.Error("Settings read them")
			}
		})
	}
}

// bigStringRun writes n records whose error_message is size bytes.
func bigStringRun(t *testing.T, cfg Config, n, size int) string {
	t.Helper()
	reqs := genRequests(n, 3)
	for i := range reqs {
		reqs[i].ErrorMessage = strings.Repeat("é", size/2)
	}
	dir := t.TempDir()
	cfg.SingleFile = true
	writeRun(t, dir, cfg, reqs, nil, n)
	return dir
}

// TestRecordStringsBounded: a string over MaxStringBytes is cut there,
// and a file whose rows take more than MaxRowBytes each (a forged
// records file: the engine keeps error messages near 512 bytes) is
// refused, in every format, before its strings are decoded.
func TestRecordStringsBounded(t *testing.T) {
	for _, f := range []Format{FormatParquet, FormatArrow, FormatJSONL} {
		t.Run(string(f), func(t *testing.T) {
			dir := bigStringRun(t, Config{Format: f}, 3, 200<<10)
			reqs, err := ReadRequests(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reqs {
				if len(r.ErrorMessage) > MaxStringBytes+len(TruncatedMark) || !strings.HasSuffix(r.ErrorMessage, TruncatedMark) {
					t.Fatalf("error_message of %d bytes (%q…), want it cut at %d", len(r.ErrorMessage), r.ErrorMessage[:8], MaxStringBytes)
				}
			}
		})
	}
	for _, f := range []Format{FormatParquet, FormatJSONL} {
		t.Run(string(f)+" rows over the bound", func(t *testing.T) {
			dir := bigStringRun(t, Config{Format: f}, 4, 2*MaxRowBytes)
			if _, err := ReadRequests(dir); err == nil || !strings.Contains(err.Error(), "not a") {
				t.Fatalf("ReadRequests: %v, want the file refused", err)
			}
		})
	}
	t.Run("arrow batch over the bound", func(t *testing.T) {
		dir := bigStringRun(t, Config{Format: FormatArrow}, 4, 1<<20)
		old := ipcBatchLimit
		ipcBatchLimit = 2 << 20
		defer func() { ipcBatchLimit = old }()
		if _, err := ReadRequests(dir); err == nil || !strings.Contains(err.Error(), "not a file reprise wrote") {
			t.Fatalf("ReadRequests: %v, want the file refused", err)
		}
	})
}

func TestBoundString(t *testing.T) {
	s := strings.Repeat("a", MaxStringBytes-1) + "é" // é straddles the bound
	if got := boundString(s); got != s[:MaxStringBytes-1]+TruncatedMark {
		t.Errorf("boundString cut at %d, want %d", len(got)-len(TruncatedMark), MaxStringBytes-1)
	}
	if got := boundString("abc"); got != "abc" {
		t.Errorf("boundString(abc) = %q", got)
	}
}

// TestOpenContextCancelled: a reader whose context is done stops at the
// next file or batch with the context's error (a SIGTERM during a long
// read ends it).
func TestOpenContextCancelled(t *testing.T) {
	dir := bigStringRun(t, Config{}, 3, 10)
	ctx, cancel := context.WithCancel(t.Context())
	r, err := OpenContext(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range r.Requests() {
		if err != nil {
			t.Fatalf("before cancel: %v", err)
		}
		n++
	}
	cancel()
	var got error
	for _, err := range r.Requests() {
		got = err
	}
	if n != 3 || !errors.Is(got, context.Canceled) {
		t.Errorf("%d rows, then %v; want 3, then context.Canceled", n, got)
	}
	if _, err := r.Manifest(); !errors.Is(err, context.Canceled) {
		t.Errorf("Manifest after cancel: %v", err)
	}
}
