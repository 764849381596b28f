package arrowio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// partName returns the name of part i inside a table's directory.
func partName(i int, f Format) string { return fmt.Sprintf("part-%05d%s", i, f.Ext()) }

// TableStats counts what a [TableWriter] wrote.
type TableStats struct {
	Rows  int64 // rows in completed and current files (after an error: in completed files)
	Files int   // files completed (renamed to their final name)
	Bytes int64 // bytes of completed files
}

// TableWriter writes Arrow records of one schema as one table of a run
// directory: dir/name.parquet with [Config.SingleFile], otherwise rolling
// parts dir/name/part-00000.parquet, … (".arrow" with FormatArrow). Files
// are written under a ".tmp" name and renamed when complete, so a crash
// leaves only complete files plus at most one ".tmp" file per table.
// [FormatJSONL] writes one file, dir/name.jsonl, in place, and flushes it
// where a Parquet table would complete a part: a crash leaves every line
// flushed, and at most one torn last line, which readers skip.
//
// Use it for any table other than records and events, e.g. the telemetry
// tables:
//
//	w, err := arrowio.NewTableWriter(runDir, "gpu", schema, cfg)
//	…
//	err = w.Write(rec) // any number of rows; rows are buffered into row groups
//	…
//	err = w.Close()    // always call it, also after errors: it completes the file
//
// The schema's metadata is stored in every file; put a version under
// [SchemaKey] (e.g. "gpu/v1") and document the table in docs/format.
// A TableWriter is not safe for concurrent use.
type TableWriter struct {
	dir    string // table directory (parts) or run directory (single file)
	name   string
	schema *arrow.Schema
	cfg    Config
	mem    memory.Allocator

	cur      fileWriter
	curTmp   string
	curRows  int
	curStart time.Time
	part     int
	stats    TableStats
	err      error // sticky
	closed   bool
}

// NewTableWriter creates dir (and dir/name for parts) and returns a writer
// for the table name with the given schema. cfg fields left zero take their
// defaults; only Format, SingleFile, RowGroupRows, PartRows, PartInterval
// and Metadata apply. No file is created before the first Write (Close
// writes an empty file if nothing was written).
func NewTableWriter(dir, name string, schema *arrow.Schema, cfg Config) (*TableWriter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("table name %q: want a plain file name such as \"gpu\"", name)
	}
	cfg = cfg.withDefaults()
	if cfg.Format == FormatJSONL {
		cfg.SingleFile = true // one file, flushed as it grows
	}
	w := &TableWriter{dir: dir, name: name, schema: schema, cfg: cfg, mem: bufferPool}
	if !cfg.SingleFile {
		w.dir = filepath.Join(dir, name)
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s table: %w", name, err)
	}
	return w, nil
}

// Schema returns the table's schema.
func (w *TableWriter) Schema() *arrow.Schema { return w.schema }

// Stats returns what was written so far.
func (w *TableWriter) Stats() TableStats { return w.stats }

// Write appends rec's rows. rec must have the writer's schema; the caller
// keeps ownership of rec (Write does not retain it). Rows are buffered into
// row groups of RowGroupRows rows; a part is completed after PartRows rows
// or when it has been open PartInterval.
func (w *TableWriter) Write(rec arrow.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("table " + w.name + ": write after close")
	}
	if rec.NumRows() == 0 {
		return nil
	}
	if err := w.write(rec); err != nil {
		return w.fail(err)
	}
	return nil
}

// fail makes err the writer's sticky error, naming the table and the file,
// discards the file being written (a part's .tmp is removed: its rows are
// lost, the complete parts stay; a JSON Lines file keeps its flushed lines)
// and reports the error to Config.OnError.
func (w *TableWriter) fail(err error) error {
	if _, ok := errors.AsType[*os.PathError](err); !ok && w.curTmp != "" {
		err = fmt.Errorf("%s: %w", w.curTmp, err)
	}
	w.err = fmt.Errorf("%s table: %w", w.name, err)
	if j, ok := w.cur.(*jsonlFile); ok {
		// Written in place: the file keeps the lines it took, flushed
		// or not, and those are the table's rows (one file).
		w.stats.Rows = j.lines()
	} else {
		w.stats.Rows -= int64(w.curRows) // lost with the file
	}
	w.curRows = 0
	if w.cur != nil {
		w.cur.abort()
		w.cur = nil
		if w.curTmp != w.finalPath() {
			os.Remove(w.curTmp)
		}
	}
	if w.cfg.OnError != nil {
		w.cfg.OnError(w.err)
	}
	return w.err
}

func (w *TableWriter) write(rec arrow.Record) error {
	split := w.splits()
	for off := int64(0); off < rec.NumRows(); {
		if w.cur == nil {
			if err := w.open(); err != nil {
				return err
			}
		}
		n := rec.NumRows() - off
		if split {
			n = min(n, int64(w.cfg.PartRows-w.curRows))
		}
		part := rec
		if off > 0 || n < rec.NumRows() {
			part = rec.NewSlice(off, off+n)
		}
		if w.curRows == 0 {
			w.curStart = time.Now()
		}
		err := w.cur.write(part)
		if part != rec {
			part.Release()
		}
		if err != nil {
			return err
		}
		off += n
		w.curRows += int(n)
		w.stats.Rows += n
		if split && w.curRows >= w.cfg.PartRows {
			if err := w.settle(); err != nil {
				return err
			}
		}
	}
	if split && w.cur != nil && w.curRows > 0 && w.cfg.PartInterval > 0 && time.Since(w.curStart) >= w.cfg.PartInterval {
		return w.settle()
	}
	return nil
}

// splits reports whether the table is made durable in steps (rolling parts,
// or a JSON Lines file flushed as it grows) rather than only at Close.
func (w *TableWriter) splits() bool { return !w.cfg.SingleFile || w.cfg.Format == FormatJSONL }

// settle makes every row written so far durable: it completes the current
// part, or flushes a JSON Lines file's lines to the operating system.
func (w *TableWriter) settle() error {
	if j, ok := w.cur.(*jsonlFile); ok {
		if err := j.flush(); err != nil {
			return err
		}
		w.curRows = 0
		return nil
	}
	return w.finish()
}

// PartAge returns how long the current part has been open (0 if none).
func (w *TableWriter) PartAge() time.Duration {
	if w.cur == nil || w.curRows == 0 {
		return 0
	}
	return time.Since(w.curStart)
}

// Roll makes the rows written so far survive a crash: it completes the
// current part file, if any (the next Write starts a new part), or flushes a
// JSON Lines file. With SingleFile (Parquet or Arrow) it does nothing.
func (w *TableWriter) Roll() error {
	if w.err != nil {
		return w.err
	}
	if !w.splits() || w.cur == nil || w.curRows == 0 {
		return nil
	}
	if err := w.settle(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Close completes the current file. If nothing was ever written it writes
// an empty file (schema only), so every table of a run can be read. After
// an error the file being written was discarded; Close returns the first
// error, and the complete files stay. Close is idempotent.
func (w *TableWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if w.cur == nil && w.stats.Files == 0 {
		if err := w.open(); err != nil {
			return w.fail(err)
		}
	}
	if w.cur != nil {
		if err := w.finish(); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// finalPath is the complete file's path for the current file.
func (w *TableWriter) finalPath() string {
	if w.cfg.SingleFile {
		return filepath.Join(w.dir, w.name+w.cfg.Format.Ext())
	}
	return filepath.Join(w.dir, partName(w.part, w.cfg.Format))
}

func (w *TableWriter) open() error {
	w.curTmp = w.finalPath() + tmpSuffix
	if w.cfg.Format == FormatJSONL {
		// Written in place: its lines are readable once flushed.
		w.curTmp = w.finalPath()
	}
	create := w.cfg.create
	if create == nil {
		create = createFile
	}
	f, err := create(w.curTmp)
	if err != nil {
		return err
	}
	switch w.cfg.Format {
	case FormatArrow:
		w.cur, err = newIPCFile(f, w.schema, w.cfg, w.mem)
	case FormatJSONL:
		w.cur, err = newJSONLFile(f, w.schema)
	default:
		w.cur, err = newParquetFile(f, w.schema, w.cfg, w.mem)
	}
	if err != nil {
		f.Close()
		os.Remove(w.curTmp)
		w.curTmp = ""
		return err
	}
	w.curRows = 0
	w.curStart = time.Now()
	return nil
}

// finish completes the current file and renames it to its final name.
// On error the file is gone and w.curRows still counts its rows (see fail).
func (w *TableWriter) finish() error {
	cur := w.cur
	w.cur = nil
	size, err := cur.close()
	if err == nil && w.curTmp != w.finalPath() {
		err = os.Rename(w.curTmp, w.finalPath())
	}
	if err != nil {
		if w.curTmp != w.finalPath() {
			os.Remove(w.curTmp)
		}
		return err
	}
	w.curRows = 0
	w.part++
	w.stats.Files++
	w.stats.Bytes += size
	return nil
}

// fileWriter is one open file of a table.
type fileWriter interface {
	write(rec arrow.Record) error
	// close completes the file (footer, flush, fsync, close) and returns
	// its size.
	close() (int64, error)
	// abort closes the file without completing it, after an error.
	abort()
}

type parquetFile struct {
	cw     *countingWriter
	fw     *pqarrow.FileWriter
	rgRows int64
	// unbuffered is set after Write: its row group is complete, and
	// WriteBuffered would append columns to it, so start a buffered one.
	unbuffered bool
}

// parquetProps returns the writer properties for schema: zstd, statistics,
// dictionary encoding for strings only, DELTA_BINARY_PACKED for integers
// (timestamps and counters compress far better as deltas), format 2.6 (needed
// for TIMESTAMP(NANOS)).
func parquetProps(schema *arrow.Schema, cfg Config, mem memory.Allocator) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithVersion(parquet.V2_LATEST),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(int64(cfg.RowGroupRows)),
		parquet.WithDictionaryDefault(false),
		parquet.WithCreatedBy("reprise (arrow-go v17)"),
	}
	for _, f := range schema.Fields() {
		switch f.Type.ID() {
		case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING:
			// Parquet dictionary encoding of Arrow strings boxes every
			// value (memo.GetOrInsert(any)) in arrow v17: one allocation
			// per row. Worth it for repetitive columns; columns marked
			// high-cardinality are written plain (zstd still compresses
			// their repeats).
			if v, _ := f.Metadata.GetValue(CardinalityKey); v != "high" {
				opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
			}
		case arrow.DICTIONARY:
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		case arrow.INT32, arrow.INT64, arrow.UINT32, arrow.UINT64, arrow.TIMESTAMP, arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16:
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

func newParquetFile(f tableFile, schema *arrow.Schema, cfg Config, mem memory.Allocator) (*parquetFile, error) {
	cw := newCountingWriter(f)
	fw, err := pqarrow.NewFileWriter(schema, cw, parquetProps(schema, cfg, mem),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem)))
	if err != nil {
		return nil, err
	}
	// pqarrow copies the schema's metadata (reprise.schema) into the
	// file's key-value metadata itself; add the run's.
	for _, k := range sortedKeys(cfg.Metadata) {
		if err := fw.AppendKeyValueMetadata(k, cfg.Metadata[k]); err != nil {
			return nil, err
		}
	}
	return &parquetFile{cw: cw, fw: fw, rgRows: int64(cfg.RowGroupRows)}, nil
}

// write writes a full row group column by column straight to the file
// (Write: one column's pages in memory at a time), and smaller records into
// a buffered row group that fills up across calls (WriteBuffered: every
// column's pages stay in memory until the row group is full).
func (p *parquetFile) write(rec arrow.Record) error {
	var err error
	if rec.NumRows() >= p.rgRows {
		err = p.fw.Write(rec)
		p.unbuffered = true
	} else {
		if p.unbuffered {
			p.fw.NewBufferedRowGroup()
			p.unbuffered = false
		}
		err = p.fw.WriteBuffered(rec)
	}
	if err != nil {
		return err
	}
	return p.cw.err
}

func (p *parquetFile) abort() { p.cw.f.Close() }

func (p *parquetFile) close() (int64, error) {
	err := p.fw.Close()
	n, ferr := p.cw.finish()
	if err == nil {
		err = ferr
	}
	return n, err
}

type ipcFile struct {
	cw *countingWriter
	fw *ipc.FileWriter
}

func newIPCFile(f tableFile, schema *arrow.Schema, cfg Config, mem memory.Allocator) (*ipcFile, error) {
	if len(cfg.Metadata) > 0 {
		md := schema.Metadata()
		keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
		for _, k := range sortedKeys(cfg.Metadata) {
			keys, vals = append(keys, k), append(vals, cfg.Metadata[k])
		}
		nmd := arrow.NewMetadata(keys, vals)
		schema = arrow.NewSchema(schema.Fields(), &nmd)
	}
	cw := newCountingWriter(f)
	fw, err := ipc.NewFileWriter(cw, ipc.WithSchema(schema), ipc.WithAllocator(mem), ipc.WithZstd())
	if err != nil {
		return nil, err
	}
	return &ipcFile{cw: cw, fw: fw}, nil
}

func (p *ipcFile) write(rec arrow.Record) error {
	if err := p.fw.Write(rec); err != nil {
		return err
	}
	return p.cw.err
}

func (p *ipcFile) abort() { p.cw.f.Close() }

func (p *ipcFile) close() (int64, error) {
	err := p.fw.Close()
	n, ferr := p.cw.finish()
	if err == nil {
		err = ferr
	}
	return n, err
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
