package arrowio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// JSON Lines: one JSON object per row, the keys the schema's column names
// in schema order, null where the column is null. It is written from the
// same Arrow records as the Parquet and Arrow files, so it holds the same
// columns and nulls by construction. Values:
//
//	integers          JSON numbers (exact; uint64 and int64 included)
//	float64           shortest round-trip number; "NaN", "+Inf", "-Inf" as strings
//	timestamp[ns]     RFC 3339 string in UTC with up to 9 fractional digits
//	utf8, dictionary  JSON strings (invalid UTF-8 becomes U+FFFD)
//	bool              true / false
//	list<int64>       a JSON array of integers

// jsonlFile writes one table as JSON Lines.
type jsonlFile struct {
	cw    *countingWriter
	keys  [][]byte // `"name":` per column, `,` before all but the first
	buf   []byte
	cells []cellWriter
	// The lines in the file: the buffered writer hands bytes to the file
	// when its buffer fills, so after a failed write the file holds the
	// lines whose last byte the file took (a torn one after them, which
	// readers skip). os counts the bytes the file took; ends are the end
	// offsets of the lines written that it may not have taken yet, and
	// taken the lines before them.
	os    *takenCounter
	ends  []int64
	taken int64
}

// takenCounter counts the bytes its file took.
type takenCounter struct {
	tableFile
	n int64
}

func (t *takenCounter) Write(p []byte) (int, error) {
	n, err := t.tableFile.Write(p)
	t.n += int64(n)
	return n, err
}

// lines returns the number of whole lines the file holds.
func (j *jsonlFile) lines() int64 {
	k := 0
	for k < len(j.ends) && j.ends[k] <= j.os.n {
		k++
	}
	if k > 0 {
		j.taken += int64(k)
		j.ends = append(j.ends[:0], j.ends[k:]...)
	}
	return j.taken
}

// cellWriter appends row i of one column as a JSON value.
type cellWriter func(b []byte, i int) []byte

func newJSONLFile(f tableFile, schema *arrow.Schema) (*jsonlFile, error) {
	tc := &takenCounter{tableFile: f}
	j := &jsonlFile{cw: newCountingWriter(tc), os: tc}
	for i, fd := range schema.Fields() {
		if _, err := cellWriterFor(fd.Type, nil); err != nil {
			return nil, fmt.Errorf("column %s: %w", fd.Name, err)
		}
		k := jsonx.AppendString(nil, fd.Name)
		if i > 0 {
			k = append([]byte{','}, k...)
		}
		j.keys = append(j.keys, append(k, ':'))
	}
	return j, nil
}

func (j *jsonlFile) write(rec arrow.Record) error {
	j.cells = j.cells[:0]
	for i, c := range rec.Columns() {
		cw, err := cellWriterFor(c.DataType(), c)
		if err != nil {
			return fmt.Errorf("column %s: %w", rec.ColumnName(i), err)
		}
		j.cells = append(j.cells, cw)
	}
	cols := rec.Columns()
	for r := 0; r < int(rec.NumRows()); r++ {
		b := append(j.buf[:0], '{')
		for c, cell := range j.cells {
			b = append(b, j.keys[c]...)
			if cols[c].IsNull(r) {
				b = append(b, "null"...)
			} else {
				b = cell(b, r)
			}
		}
		b = append(b, '}', '\n')
		j.buf = b
		if _, err := j.cw.Write(b); err != nil {
			return err
		}
		j.ends = append(j.ends, j.cw.n)
		if len(j.ends) >= 4096 {
			j.lines() // those the file took: ends stays bounded by the buffer's lines
		}
	}
	return nil
}

// flush hands the buffered lines to the operating system and syncs them,
// so they survive the process; the file stays open.
func (j *jsonlFile) flush() error {
	if j.cw.err != nil {
		return j.cw.err
	}
	if err := j.cw.bw.Flush(); err != nil {
		j.cw.err = err
		return err
	}
	if err := j.cw.f.Sync(); err != nil {
		j.cw.err = err
		return err
	}
	return nil
}

func (j *jsonlFile) close() (int64, error) { return j.cw.finish() }

func (j *jsonlFile) abort() { j.cw.f.Close() }

// cellWriterFor returns the cell writer of a column of type t (a is the
// column; nil only checks that the type is supported).
func cellWriterFor(t arrow.DataType, a arrow.Array) (cellWriter, error) {
	switch t.ID() {
	case arrow.INT8:
		return intCell(a, func(a *array.Int8, i int) int64 { return int64(a.Value(i)) }), nil
	case arrow.INT16:
		return intCell(a, func(a *array.Int16, i int) int64 { return int64(a.Value(i)) }), nil
	case arrow.INT32:
		return intCell(a, func(a *array.Int32, i int) int64 { return int64(a.Value(i)) }), nil
	case arrow.INT64:
		return intCell(a, func(a *array.Int64, i int) int64 { return a.Value(i) }), nil
	case arrow.UINT8:
		return intCell(a, func(a *array.Uint8, i int) int64 { return int64(a.Value(i)) }), nil
	case arrow.UINT16:
		return intCell(a, func(a *array.Uint16, i int) int64 { return int64(a.Value(i)) }), nil
	case arrow.UINT32:
		return intCell(a, func(a *array.Uint32, i int) int64 { return int64(a.Value(i)) }), nil
	case arrow.UINT64:
		u, _ := a.(*array.Uint64)
		return func(b []byte, i int) []byte { return strconv.AppendUint(b, u.Value(i), 10) }, nil
	case arrow.FLOAT64:
		f, _ := a.(*array.Float64)
		return func(b []byte, i int) []byte { return appendJSONFloat(b, f.Value(i)) }, nil
	case arrow.BOOL:
		v, _ := a.(*array.Boolean)
		return func(b []byte, i int) []byte { return strconv.AppendBool(b, v.Value(i)) }, nil
	case arrow.STRING:
		s, _ := a.(*array.String)
		return func(b []byte, i int) []byte { return jsonx.AppendString(b, s.Value(i)) }, nil
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).Unit != arrow.Nanosecond {
			break
		}
		ts, _ := a.(*array.Timestamp)
		return func(b []byte, i int) []byte {
			b = append(b, '"')
			b = time.Unix(0, int64(ts.Value(i))).UTC().AppendFormat(b, time.RFC3339Nano)
			return append(b, '"')
		}, nil
	case arrow.LIST:
		if t.(*arrow.ListType).Elem().ID() != arrow.INT64 {
			break
		}
		l, _ := a.(*array.List)
		if l == nil {
			return nil, nil
		}
		vals := l.ListValues().(*array.Int64)
		return func(b []byte, i int) []byte {
			b = append(b, '[')
			start, end := l.ValueOffsets(i)
			for k := start; k < end; k++ {
				if k > start {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, vals.Value(int(k)), 10)
			}
			return append(b, ']')
		}, nil
	case arrow.DICTIONARY:
		dt := t.(*arrow.DictionaryType)
		if dt.ValueType.ID() != arrow.STRING {
			break
		}
		d, _ := a.(*array.Dictionary)
		if d == nil {
			return nil, nil
		}
		vals := d.Dictionary().(*array.String)
		return func(b []byte, i int) []byte { return jsonx.AppendString(b, vals.Value(d.GetValueIndex(i))) }, nil
	}
	return nil, fmt.Errorf("type %s cannot be written as JSON Lines", t)
}

func intCell[A arrow.Array](a arrow.Array, v func(A, int) int64) cellWriter {
	x, _ := a.(A)
	return func(b []byte, i int) []byte { return strconv.AppendInt(b, v(x, i), 10) }
}

func appendJSONFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// tableSchemas are the schemas of the tables a JSON Lines file may hold,
// by table name (the file is name.jsonl): the file itself has no schema.
var tableSchemas = map[string]func() *arrow.Schema{
	RecordsTable:       RecordsSchema,
	EventsTable:        EventsSchema,
	ServerMetricsTable: ServerMetricsSchema,
	GPUTable:           GPUSchema,
}

// jsonlBatchRows is the number of rows per record batch read from JSON Lines.
const jsonlBatchRows = 64 * 1024

// readJSONL calls fn with the rows of a JSON Lines file of table as Arrow
// records of the table's schema, its dictionary columns read as utf8. A
// last line without its newline (the process writing it was killed) is
// skipped; every other problem is an error naming the line and column.
func readJSONL(r io.Reader, table string, fn func(arrow.Record) error) error {
	mk, ok := tableSchemas[table]
	if !ok {
		return fmt.Errorf("no table %q: a JSON Lines table file is records.jsonl, events.jsonl, server_metrics.jsonl or gpu.jsonl", table)
	}
	schema := plainSchema(mk())
	index := make(map[string]int, schema.NumFields())
	for i, fd := range schema.Fields() {
		index[fd.Name] = i
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	rows := 0
	emit := func() error {
		rec := rb.NewRecord()
		defer rec.Release()
		rows = 0
		return fn(rec)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	seen := make([]bool, schema.NumFields())
	vals := make([][]byte, schema.NumFields())
	var line []byte
	batchBytes := 0
	for n := 1; ; n++ {
		b, err := readBoundedLine(br, line[:0], MaxRowBytes)
		line = b
		if errors.Is(err, io.EOF) {
			break // a torn last line (no newline) is skipped
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		batchBytes += len(b)
		clear(seen)
		err = scanObject(b, func(k, v []byte) error {
			i, ok := index[string(k)]
			if !ok {
				md := schema.Metadata()
				return fmt.Errorf("column %q is not in the %s schema (%s)", k, table, md.Values()[md.FindKey(SchemaKey)])
			}
			if seen[i] {
				return fmt.Errorf("column %s given twice", k)
			}
			seen[i], vals[i] = true, v
			return nil
		})
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		for i, fd := range schema.Fields() {
			if !seen[i] || string(vals[i]) == "null" {
				if !fd.Nullable && !seen[i] {
					return fmt.Errorf("line %d: column %s missing", n, fd.Name)
				}
				if !fd.Nullable {
					return fmt.Errorf("line %d: column %s: null in a column that is never null", n, fd.Name)
				}
				rb.Field(i).AppendNull()
				continue
			}
			if err := appendJSONValue(rb.Field(i), vals[i]); err != nil {
				return fmt.Errorf("line %d: column %s: %w", n, fd.Name, err)
			}
		}
		rows++
		if rows == jsonlBatchRows || batchBytes >= MaxBatchBytes/4 {
			batchBytes = 0
			if err := emit(); err != nil {
				return err
			}
		}
	}
	if rows > 0 {
		return emit()
	}
	return nil
}

// plainSchema returns s with its dictionary columns as their value type.
func plainSchema(s *arrow.Schema) *arrow.Schema {
	fs := s.Fields()
	for i, f := range fs {
		if dt, ok := f.Type.(*arrow.DictionaryType); ok {
			fs[i].Type = dt.ValueType
		}
	}
	md := s.Metadata()
	return arrow.NewSchema(fs, &md)
}

// scanObject calls fn with the key (unquoted; keys are plain column names)
// and the raw value of every member of the JSON object in line, in order.
// String values keep their quotes; other values are the bytes up to the next
// ',' or '}', checked by appendJSONValue.
func scanObject(line []byte, fn func(k, v []byte) error) error {
	p := bytes.TrimSpace(line)
	if len(p) < 2 || p[0] != '{' || p[len(p)-1] != '}' {
		return errors.New("want one JSON object per line")
	}
	p = p[1 : len(p)-1]
	skip := func() {
		for len(p) > 0 && (p[0] == ' ' || p[0] == '\t' || p[0] == '\r' || p[0] == '\n') {
			p = p[1:]
		}
	}
	skip()
	if len(p) == 0 {
		return nil
	}
	for {
		// "key":
		if len(p) == 0 || p[0] != '"' {
			return errors.New("want a quoted column name")
		}
		end := bytes.IndexByte(p[1:], '"')
		if end < 0 {
			return errors.New("unterminated column name")
		}
		k := p[1 : 1+end]
		if bytes.IndexByte(k, '\\') >= 0 {
			return fmt.Errorf("column name %q: escapes are not used in column names", k)
		}
		p = p[2+end:]
		skip()
		if len(p) == 0 || p[0] != ':' {
			return fmt.Errorf("column %s: want ':'", k)
		}
		p = p[1:]
		skip()
		// value
		var v []byte
		if len(p) > 0 && p[0] == '"' {
			i := 1
			for ; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			if i >= len(p) {
				return fmt.Errorf("column %s: unterminated string", k)
			}
			v, p = p[:i+1], p[i+1:]
		} else if len(p) > 0 && p[0] == '[' {
			// An array of numbers (list<int64>): no nesting, no strings.
			i := bytes.IndexByte(p, ']')
			if i < 0 {
				return fmt.Errorf("column %s: unterminated array", k)
			}
			v, p = p[:i+1], p[i+1:]
		} else {
			i := bytes.IndexByte(p, ',')
			if i < 0 {
				i = len(p)
			}
			v, p = bytes.TrimRight(p[:i], " \t\r\n"), p[i:]
			if len(v) == 0 {
				return fmt.Errorf("column %s: want a value", k)
			}
		}
		if err := fn(k, v); err != nil {
			return err
		}
		skip()
		if len(p) == 0 {
			return nil
		}
		if p[0] != ',' {
			return fmt.Errorf("column %s: want ',' or '}' after the value", k)
		}
		p = p[1:]
		skip()
	}
}

// appendJSONValue parses one non-null JSON value (as scanObject found it)
// into b.
func appendJSONValue(b array.Builder, v json.RawMessage) error {
	str := func() (string, error) {
		if len(v) < 2 || v[0] != '"' {
			return "", fmt.Errorf("%s: want a string", v)
		}
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1]), nil
		}
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	}
	integer := func() (int64, error) {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: want an integer", v)
		}
		return n, nil
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		s, err := str()
		if err != nil {
			return err
		}
		b.Append(s)
	case *array.BooleanBuilder:
		switch string(v) {
		case "true":
			b.Append(true)
		case "false":
			b.Append(false)
		default:
			return fmt.Errorf("%s: want true or false", v)
		}
	case *array.TimestampBuilder:
		s, err := str()
		if err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return err
		}
		b.Append(arrow.Timestamp(t.UnixNano()))
	case *array.Float64Builder:
		if v[0] == '"' {
			s, err := str()
			f, perr := strconv.ParseFloat(s, 64)
			if err != nil || perr != nil || !(math.IsNaN(f) || math.IsInf(f, 0)) {
				return fmt.Errorf("%s: want a number, \"NaN\", \"+Inf\" or \"-Inf\"", v)
			}
			b.Append(f)
			return nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return fmt.Errorf("%s: want a number", v)
		}
		b.Append(f)
	case *array.Uint64Builder:
		u, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: want an unsigned integer", v)
		}
		b.Append(u)
	case *array.Int64Builder:
		n, err := integer()
		if err != nil {
			return err
		}
		b.Append(n)
	case *array.Int32Builder:
		n, err := integer()
		if err != nil {
			return err
		}
		if n != int64(int32(n)) {
			return fmt.Errorf("%d out of int32 range", n)
		}
		b.Append(int32(n))
	case *array.ListBuilder:
		vb, ok := b.ValueBuilder().(*array.Int64Builder)
		if !ok || len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
			return fmt.Errorf("%.40s: want an array of integers", v)
		}
		items := bytes.TrimSpace(v[1 : len(v)-1])
		b.Append(true)
		for len(items) > 0 {
			item, rest, _ := bytes.Cut(items, []byte{','})
			n, err := strconv.ParseInt(string(bytes.TrimSpace(item)), 10, 64)
			if err != nil {
				return fmt.Errorf("%.40s: want an array of integers", v)
			}
			vb.Append(n)
			items = rest
		}
	default:
		return fmt.Errorf("type %s cannot be read from JSON Lines", b.Type())
	}
	return nil
}

// readBoundedLine appends the next line of br (its newline included) to
// buf; a line longer than limit is an error, read no further than that.
// A last line without a newline returns io.EOF.
func readBoundedLine(br *bufio.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > limit {
			return buf, fmt.Errorf("longer than %d bytes: not a line reprise wrote", limit)
		}
		buf = append(buf, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}
