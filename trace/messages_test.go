package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// readToError reads every row of data as the file name and returns the
// error that ended reading (nil at a clean end).
func readToError(t *testing.T, name string, data []byte) error {
	t.Helper()
	r, err := NewReader(name, bytes.NewReader(data), Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	var row Row
	for {
		err := r.Next(&row)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && r.Err() != nil {
			return err
		}
	}
}

// A compressed trace cut short names the file, the compression, the line
// reading stopped on and how many lines were read whole: a cut gzip header
// used to say only "gzip: EOF", and a .zst cut inside its first block had
// no line at all.
func TestCutShortCompressed(t *testing.T) {
	var plain bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&plain, `{"timestamp": %d, "input_length": 10, "output_length": 5, "hash_ids": [%d]}`+"\n", i, i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Name = "t.jsonl" // an FNAME field, as gzip(1) writes
	zw.Write(plain.Bytes())
	zw.Close()
	var zst bytes.Buffer
	ze, err := zstd.NewWriter(&zst)
	if err != nil {
		t.Fatal(err)
	}
	ze.Write(plain.Bytes()[:4000]) // one block
	ze.Close()

	tests := []struct {
		name, file string
		data       []byte
		want       string
		line       int64
	}{
		{"gzip header", "t.jsonl.gz", gz.Bytes()[:5], "t.jsonl.gz:1: read: the gzip stream is cut short in its header, before line 1", 1},
		{"gzip name", "t.jsonl.gz", gz.Bytes()[:13], "t.jsonl.gz:1: read: the gzip stream is cut short in its header, before line 1", 1},
		{"gzip middle", "t.jsonl.gz", gz.Bytes()[:gz.Len()/2], "read: the gzip stream is cut short on this line (the lines before it were read whole): unexpected EOF", -1},
		{"zstd first block", "t.jsonl.zst", zst.Bytes()[:zst.Len()/2], "t.jsonl.zst:1: read: the zstd stream is cut short on this line (the lines before it were read whole)", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := readToError(t, tt.file, tt.data)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrRead) {
				t.Errorf("error %v is not ErrRead", err)
			}
			pe, ok := errors.AsType[*ParseError](err)
			if !ok || pe.Path != tt.file || pe.Line < 1 || tt.line > 0 && pe.Line != tt.line {
				t.Fatalf("error %#v, want a *ParseError naming %s and line %d", err, tt.file, tt.line)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if tt.line < 0 && pe.Line < 100 {
				t.Errorf("line %d: the first half of the stream holds more than 100 lines", pe.Line)
			}
		})
	}
}

// The Git LFS hint names the pointer by its path inside its repository,
// which is what `git lfs pull --include` matches: it used to quote the
// path as given, absolute paths included.
func TestLFSHintRepositoryPath(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "traces", "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{})
	if !errors.Is(err, ErrLFSPointer) {
		t.Fatalf("error %v, want ErrLFSPointer", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `git lfs pull --include="traces/big/t.jsonl"`) {
		t.Errorf("error %q\nwant --include with the repository path traces/big/t.jsonl", msg)
	}
	if strings.Contains(msg, `--include="`+path) {
		t.Errorf("error %q quotes the absolute path in --include", msg)
	}
	if !strings.Contains(msg, "in the repository "+root) {
		t.Errorf("error %q does not say which repository", msg)
	}

	// Outside any repository the file's own name is the pattern.
	alone := filepath.Join(t.TempDir(), "u.jsonl")
	if err := os.WriteFile(alone, []byte("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(alone, Options{})
	if msg := fmt.Sprint(err); !strings.Contains(msg, `--include="u.jsonl"`) {
		t.Errorf("error %q\nwant --include with the file name", msg)
	}
}
