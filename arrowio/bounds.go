package arrowio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Bounds of what is read from a run directory (docs/format/records.md,
// "Reading a run directory"). reprise writes far less; a file over them
// is not one it wrote, and is refused (or, for a string, cut) rather than
// read into memory.
const (
	// MaxJSONFileBytes bounds manifest.json and summary.json.
	MaxJSONFileBytes = 64 << 20
	// MaxStringBytes bounds each string value read from a table; a
	// longer one is cut there (at a UTF-8 boundary) and ends in
	// [TruncatedMark].
	MaxStringBytes = 64 << 10
	// MaxRowBytes bounds the uncompressed bytes per row of a Parquet row
	// group (its metadata says them before anything is decoded) and a
	// JSON Lines table's line.
	MaxRowBytes = 1 << 20
	// MaxBatchBytes bounds the memory one record batch (a Parquet row
	// group, an Arrow IPC record batch) may take once decoded.
	MaxBatchBytes = 256 << 20
)

// TruncatedMark ends a string value cut at [MaxStringBytes].
const TruncatedMark = "…[truncated]"

// ErrNotRegular is returned (wrapped) for a run-directory file that is not
// a regular file: a FIFO, a device, a directory or a symbolic link.
var ErrNotRegular = errors.New("not a regular file")

// openRunFile opens path, a file of a run directory, for reading: only a
// regular file, never through a symbolic link at its last element, and
// without blocking (a FIFO is refused, not waited on).
func openRunFile(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("read %s: %w (a symbolic link: a run directory's files are read only as written there)", path, ErrNotRegular)
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w (%s)", path, ErrNotRegular, st.Mode().Type())
	}
	return f, st, nil
}

// readRunFile reads a whole run-directory file of at most limit bytes.
func readRunFile(path string, limit int64) ([]byte, error) {
	f, st, err := openRunFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("read %s: %d bytes, over the %d a run writes there: not a file reprise wrote", path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("read %s: over the %d bytes a run writes there: not a file reprise wrote", path, limit)
	}
	return b, nil
}

// boundString returns s, or its first MaxStringBytes bytes (cut at a
// rune boundary) and TruncatedMark.
func boundString(s string) string {
	if len(s) <= MaxStringBytes {
		return s
	}
	n := MaxStringBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + TruncatedMark
}

// errBatchTooLarge is the panic of a boundedAllocator over its limit;
// ReadFile recovers it into an error.
var errBatchTooLarge = errors.New("BUG: unrecovered batch bound")

// boundedAllocator is an allocator that panics with errBatchTooLarge when
// more than limit bytes are live at once: a corrupt or forged file whose
// decoding would take more memory than any file reprise writes fails
// instead. Safe for concurrent use.
type boundedAllocator struct {
	memory.Allocator
	limit int64
	live  atomic.Int64
}

func newBoundedAllocator(limit int64) *boundedAllocator {
	return &boundedAllocator{Allocator: memory.DefaultAllocator, limit: limit}
}

func (a *boundedAllocator) Allocate(size int) []byte {
	if a.live.Add(int64(size)) > a.limit {
		a.live.Add(-int64(size))
		panic(errBatchTooLarge)
	}
	return a.Allocator.Allocate(size)
}

func (a *boundedAllocator) Reallocate(size int, b []byte) []byte {
	d := int64(size - len(b))
	if a.live.Add(d) > a.limit {
		a.live.Add(-d)
		panic(errBatchTooLarge)
	}
	return a.Allocator.Reallocate(size, b)
}

func (a *boundedAllocator) Free(b []byte) {
	a.live.Add(-int64(len(b)))
	a.Allocator.Free(b)
}
