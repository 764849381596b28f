package arrowio

import (
	"errors"
	"fmt"
	"time"
)

// Format is a file format for tables.
type Format string

// The formats.
const (
	FormatParquet Format = "parquet" // Parquet, zstd, one row group per RowGroupRows rows
	FormatArrow   Format = "arrow"   // Arrow IPC file format (Feather v2), zstd buffers
	FormatJSONL   Format = "jsonl"   // JSON Lines, one object per row, the same columns and nulls
)

// allFormats lists every format, for recognising a table's files.
var allFormats = []Format{FormatParquet, FormatArrow, FormatJSONL}

// Ext returns the file name extension of the format, with the dot.
func (f Format) Ext() string {
	switch f {
	case FormatArrow:
		return ".arrow"
	case FormatJSONL:
		return ".jsonl"
	}
	return ".parquet"
}

// Defaults of [Config].
const (
	DefaultFormat       = FormatParquet
	DefaultRowGroupRows = 32 * 1024
	DefaultPartRows     = 1024 * 1024
	DefaultPartInterval = 5 * time.Second
	DefaultQueueBatches = 1024
)

// Config says how tables are written. Build it with [NewConfig]; the zero
// value is invalid until Validate passes, but every zero field means its
// default when passed to a writer, so Config{} works too.
type Config struct {
	// Format is FormatParquet (default), FormatArrow or FormatJSONL (always
	// one file per table, as with SingleFile, flushed as it grows).
	Format Format
	// SingleFile writes one file per table (records.parquet) instead of
	// rolling parts (records/part-00000.parquet, …). A crash then loses
	// the whole table; Close still leaves a complete file.
	SingleFile bool
	// RowGroupRows is the number of rows per Parquet row group (Arrow record
	// batch); it bounds the writer's memory. Default 32,768.
	RowGroupRows int
	// PartRows is the number of rows after which the current part is
	// completed and a new one starts (a JSON Lines file is flushed
	// instead). Its last row group may be smaller than RowGroupRows.
	// Default 1,048,576.
	PartRows int
	// PartInterval bounds how long a row waits to be on disk in a complete
	// file: a part is completed (a JSON Lines file flushed), with whatever
	// rows it has, before its first row is PartInterval old. With PartRows
	// this is the writer's durability promise: a row written to a
	// [RunWriter] is readable from disk, even after kill -9, within
	// PartInterval or PartRows rows, whichever comes first (as long as the
	// disk keeps up). Default 5 seconds; negative disables it. With
	// SingleFile (Parquet or Arrow) there are no parts and no promise.
	PartInterval time.Duration
	// QueueBatches is the number of batches a [TelemetryWriter]'s queue
	// holds before Write drops a batch (counted) rather than make a
	// scraper wait for the disk. Default 1,024. ([RunWriter] has no queue:
	// the engine's is in front of it.)
	QueueBatches int
	// Metadata is added to every file's key-value metadata (Parquet) or
	// schema metadata (Arrow), e.g. reprise.version.
	Metadata map[string]string
	// OnError, when set, is called with a table's first write error (disk
	// full, …) as soon as it happens, from the goroutine that hit it; the
	// error names the table and the file. A table calls it at most once,
	// but several tables may call it, concurrently. After the error the
	// table writes nothing more: its complete files stay readable, the file
	// being written is discarded (a part's ".tmp") and later rows are
	// dropped and counted. Use it to stop a run at once.
	OnError func(error)

	// create replaces os.Create for a table's files (tests: a full disk).
	create func(path string) (tableFile, error)
}

// NewConfig returns a Config with every default filled in.
func NewConfig() Config {
	return Config{
		Format:       DefaultFormat,
		RowGroupRows: DefaultRowGroupRows,
		PartRows:     DefaultPartRows,
		PartInterval: DefaultPartInterval,
		QueueBatches: DefaultQueueBatches,
	}
}

// Validate reports every problem with c at once. It does not change c.
func (c Config) Validate() error {
	var errs []error
	switch c.Format {
	case "", FormatParquet, FormatArrow, FormatJSONL:
	default:
		errs = append(errs, fmt.Errorf("format %q: want %q, %q or %q", c.Format, FormatParquet, FormatArrow, FormatJSONL))
	}
	if c.RowGroupRows < 0 {
		errs = append(errs, fmt.Errorf("row group rows %d: must be positive (0 = %d)", c.RowGroupRows, DefaultRowGroupRows))
	}
	if c.PartRows < 0 {
		errs = append(errs, fmt.Errorf("part rows %d: must be positive (0 = %d)", c.PartRows, DefaultPartRows))
	}
	if c.QueueBatches < 0 {
		errs = append(errs, fmt.Errorf("queue batches %d: must be positive (0 = %d)", c.QueueBatches, DefaultQueueBatches))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with zero fields replaced by defaults.
func (c Config) withDefaults() Config {
	if c.Format == "" {
		c.Format = DefaultFormat
	}
	if c.RowGroupRows == 0 {
		c.RowGroupRows = DefaultRowGroupRows
	}
	if c.PartRows == 0 {
		c.PartRows = DefaultPartRows
	}
	if c.PartInterval == 0 {
		c.PartInterval = DefaultPartInterval
	}
	if c.QueueBatches == 0 {
		c.QueueBatches = DefaultQueueBatches
	}
	return c
}
