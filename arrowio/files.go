package arrowio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to path so that readers see either the old
// file or the complete new one, never a partial write: it writes a
// temporary file in the same directory, syncs it and renames it over path.
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*"+tmpSuffix)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// tmpSuffix marks a file being written. A file without it is complete.
const tmpSuffix = ".tmp"

// tableFile is what a table writes to: an *os.File, or in tests one that fails
// like a full disk.
type tableFile interface {
	io.Writer
	Sync() error
	Close() error
}

// createFile creates a table's file; tests replace it (Config.create).
func createFile(path string) (tableFile, error) { return os.Create(path) }

// countingWriter buffers writes to a file, counts bytes and keeps the
// first error: the parquet writer's Close drops footer write errors in
// arrow v17, so errors are checked here.
type countingWriter struct {
	f   tableFile
	bw  *bufio.Writer
	n   int64
	err error
}

func newCountingWriter(f tableFile) *countingWriter {
	return &countingWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20)}
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.bw.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// Seek supports only Seek(0, io.SeekCurrent), the position query the IPC
// file writer makes.
func (c *countingWriter) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, errors.New("arrowio: countingWriter can only report its position")
	}
	return c.n, nil
}

// finish flushes, syncs and closes the file.
func (c *countingWriter) finish() (int64, error) {
	err := c.err
	if err == nil {
		err = c.bw.Flush()
	}
	if err == nil {
		err = c.f.Sync()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return c.n, err
}
