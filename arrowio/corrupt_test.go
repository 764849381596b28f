package arrowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorruptFiles: damaged or foreign files give an error naming the
// file, never a panic or a silent partial read.
func TestCorruptFiles(t *testing.T) {
	src := t.TempDir()
	writeRun(t, src, Config{SingleFile: true}, genRequests(50, 1), nil, 10)
	good, err := os.ReadFile(filepath.Join(src, "records.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	evDir := t.TempDir()
	writeRun(t, evDir, Config{SingleFile: true}, nil, genEvents(50, 1), 10)
	events, err := os.ReadFile(filepath.Join(evDir, "events.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "records.parquet"},
		{"not parquet", []byte("request_id,ttft_ns\n1,2\n"), "records.parquet"},
		{"truncated footer", good[:len(good)-20], "records.parquet"},
		{"truncated half", good[:len(good)/2], "records.parquet"},
		{"events file as records", events, "the events table, not records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "records.parquet"), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadRequests(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
