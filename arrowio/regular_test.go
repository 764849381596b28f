package arrowio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRunDirReadsOnlyRegularFiles: a run directory's manifest.json,
// summary.json, a table file and a table's parts directory that are
// symbolic links (a forged run directory pointing at any file of the
// user's) or a FIFO (which would block the reader) are refused with
// ErrNotRegular, never followed or opened.
func TestRunDirReadsOnlyRegularFiles(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"token":"planted-secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "records.jsonl"), []byte("{}\n"), 0o600)
	os.Mkdir(filepath.Join(outside, "records"), 0o755)
	for _, tt := range []struct {
		name string
		make func(dir string) error
		read func(r *RunReader) error
	}{
		{"manifest link", func(dir string) error { return os.Symlink(secret, filepath.Join(dir, ManifestFile)) },
			func(r *RunReader) error { _, err := r.Manifest(); return err }},
		{"summary link", func(dir string) error { return os.Symlink(secret, filepath.Join(dir, SummaryFile)) },
			func(r *RunReader) error { _, err := r.Summary(); return err }},
		{"settings via manifest link", func(dir string) error { return os.Symlink(secret, filepath.Join(dir, ManifestFile)) },
			func(r *RunReader) error { _, err := r.Settings(); return err }},
		{"manifest FIFO", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, ManifestFile), 0o600) },
			func(r *RunReader) error { _, err := r.Manifest(); return err }},
		{"records link", func(dir string) error {
			return os.Symlink(filepath.Join(outside, "records.jsonl"), filepath.Join(dir, "records.jsonl"))
		}, func(r *RunReader) error {
			for _, err := range r.Requests() {
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"parts directory link", func(dir string) error {
			return os.Symlink(filepath.Join(outside, "records"), filepath.Join(dir, RecordsTable))
		}, func(r *RunReader) error { _, err := TableFiles(r.Dir(), RecordsTable); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.make(dir); err != nil {
				t.Skip(err) // no symlinks or FIFOs here
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			err = tt.read(r)
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("read: %v, want ErrNotRegular", err)
			}
			if err != nil && strings.Contains(err.Error(), "planted-secret") {
				t.Errorf("the error quotes the linked file: %v", err)
			}
		})
	}
}
