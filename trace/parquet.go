package trace

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/internal/jsonx"
)

// parquetMagic starts (and ends) every Parquet file.
var parquetMagic = []byte("PAR1")

// parquetDecoder reads a FormatTable dataset stored as Parquet (how
// Hugging Face ships datasets): the named columns of each row group, one
// row group in memory at a time. Parquet needs random access (its footer
// says where the columns are), so input that is not a file is copied to a
// temporary file first. Row.Line is the 1-based row number.
type parquetDecoder struct {
	r        *Reader
	pf       *file.Reader
	fr       *pqarrow.FileReader
	cols     tableCols
	idx      []int // the file's column index of each of cols, -1 absent
	sessions *sessions
	rg       int
	rec      arrow.Record
	get      [nTableCols]func(i int) ([]byte, bool)
	i        int   // next row of rec
	row      int64 // rows before rec
	buf      []byte
}

// openParquet makes r read the Parquet file in src (whose first bytes,
// still unread in br, are its magic).
func (r *Reader) openParquet(src io.Reader) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = r.fileErr(0, "", fmt.Errorf("%w: corrupt Parquet file: %v", ErrRead, p))
		}
	}()
	f, ok := src.(interface {
		io.ReaderAt
		io.Seeker
	})
	if !ok {
		tmp, terr := os.CreateTemp("", "reprise-parquet-*")
		if terr != nil {
			return r.fileErr(0, "", fmt.Errorf("%w: a temporary copy of the Parquet input: %w", ErrRead, terr))
		}
		os.Remove(tmp.Name()) // gone once closed
		r.closers = append(r.closers, tmp.Close)
		if _, cerr := io.Copy(tmp, src); cerr != nil {
			return r.fileErr(0, "", fmt.Errorf("%w: copying the Parquet input: %w", ErrRead, cerr))
		}
		f = tmp
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return r.fileErr(0, "", fmt.Errorf("%w: not a readable Parquet file: %w", ErrRead, err))
	}
	r.closers = append(r.closers, pf.Close)
	// String columns are read as dictionaries: a value repeated in many
	// rows (a dictionary-encoded column) is held once, not once a row.
	var props pqarrow.ArrowReadProperties
	for c := 0; c < pf.MetaData().Schema.NumColumns(); c++ {
		if pf.MetaData().Schema.Column(c).PhysicalType() == parquet.Types.ByteArray {
			props.SetReadDict(c, true)
		}
	}
	fr, err := pqarrow.NewFileReader(pf, props, memory.DefaultAllocator)
	if err != nil {
		return r.fileErr(0, "", fmt.Errorf("%w: %w", ErrRead, err))
	}
	schema, err := fr.Schema()
	if err != nil {
		return r.fileErr(0, "", fmt.Errorf("%w: %w", ErrRead, err))
	}
	names := make([]string, schema.NumFields())
	for i, fl := range schema.Fields() {
		names[i] = fl.Name
	}
	cols, err := resolveColumns(r.opts.Columns, names)
	if err != nil {
		return r.fileErr(0, "", err)
	}
	d := &parquetDecoder{r: r, pf: pf, fr: fr, cols: cols, sessions: newSessions()}
	for _, i := range []int{cols.prompt, cols.input, cols.output, cols.session, cols.ts, cols.image, cols.audio} {
		d.idx = append(d.idx, i)
	}
	r.format = FormatTable
	r.dec = d
	r.closers = append(r.closers, func() error { d.release(); return nil })
	return nil
}

func (d *parquetDecoder) release() {
	if d.rec != nil {
		d.rec.Release()
		d.rec = nil
	}
}

// load reads the next row group's columns into d.rec; io.EOF after the last.
func (d *parquetDecoder) load() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: corrupt Parquet row group %d: %v", ErrRead, d.rg, p)
		}
	}()
	if d.rec != nil {
		d.row += d.rec.NumRows()
		d.release()
	}
	for d.rg < d.pf.NumRowGroups() {
		rg := d.rg
		d.rg++
		var leaves []int
		var fields []int
		for _, i := range d.idx {
			if i >= 0 {
				fields = append(fields, i)
			}
		}
		leaves, err = leafColumns(d.fr, fields)
		if err != nil {
			return err
		}
		if err := checkRowGroup(d.pf, rg, leaves); err != nil {
			return err
		}
		if err := checkNested(d.pf, d.fr, rg, fields); err != nil {
			return err
		}
		d.fr.Props.BatchSize = max(d.pf.MetaData().RowGroup(rg).NumRows(), 1)
		rr, err := d.fr.GetRecordReader(context.Background(), leaves, []int{rg})
		if err != nil {
			return fmt.Errorf("%w: row group %d: %w", ErrRead, rg, err)
		}
		if !rr.Next() {
			rerr := rr.Err()
			rr.Release()
			if rerr != nil && !errors.Is(rerr, io.EOF) {
				return fmt.Errorf("%w: row group %d: %w", ErrRead, rg, rerr)
			}
			continue
		}
		rec := rr.Record()
		rec.Retain()
		rr.Release()
		d.rec, d.i = rec, 0
		schema := rec.Schema()
		for k, i := range d.idx {
			d.get[k] = nil
			if i < 0 {
				continue
			}
			name := d.cols.names[k]
			ci := schema.FieldIndices(name)
			if len(ci) == 0 {
				return fmt.Errorf("%w: column %q missing from row group %d", ErrRead, name, rg)
			}
			var get func(int) ([]byte, bool)
			var gerr error
			if k == 5 || k == 6 { // the image and audio columns
				get, gerr = mediaCellGetter(rec.Column(ci[0]), &d.buf)
			} else {
				get, gerr = cellGetter(rec.Column(ci[0]), &d.buf)
			}
			if gerr != nil {
				return fmt.Errorf("%w: column %q: %w", ErrHeader, name, gerr)
			}
			d.get[k] = get
		}
		return nil
	}
	return io.EOF
}

// MaxRowGroupBytes bounds the uncompressed bytes of the columns read of
// one Parquet row group, which is decoded whole.
const MaxRowGroupBytes = 1 << 30

// maxParquetRow is the cap of a Parquet row's cells, the text formats'
// line cap (a variable so that a test can lower it).
var maxParquetRow int64 = DefaultMaxLineBytes

// checkRowGroup refuses row group rg when its metadata says the leaves
// read hold more than DefaultMaxLineBytes a row (the text formats' line
// cap), or MaxRowGroupBytes in all, uncompressed: known before anything
// is decompressed.
func checkRowGroup(pf *file.Reader, rg int, leaves []int) error {
	md := pf.MetaData().RowGroup(rg)
	rows := max(md.NumRows(), 1)
	limit := min(MaxRowGroupBytes, rows*maxParquetRow)
	var total int64
	for _, c := range leaves {
		cc, err := md.ColumnChunk(c)
		if err != nil {
			return fmt.Errorf("%w: row group %d: %w", ErrRead, rg, err)
		}
		n := cc.TotalUncompressedSize()
		if n < 0 || total+n > limit || total+n < total {
			return fmt.Errorf("%w: row group %d: its %d rows hold more than %d bytes uncompressed (column %s: %d bytes), over the cap of %d bytes a row and %d a row group; shorten the rows or write smaller row groups",
				ErrRead, rg, md.NumRows(), limit, cc.PathInSchema().String(), n, maxParquetRow, int64(MaxRowGroupBytes))
		}
		total += n
	}
	return nil
}

// checkNested decodes the leaf columns of the struct and list fields of
// row group rg once, here: pqarrow reads a struct's children on goroutines
// of its own, where a damaged page's panic (a corrupt Snappy block, bad
// levels) could not be recovered and would end the process. Found here,
// it is the file's error.
func checkNested(pf *file.Reader, fr *pqarrow.FileReader, rg int, fields []int) (err error) {
	var nested []int
	for _, f := range fields {
		if f >= 0 && f < len(fr.Manifest.Fields) && len(fr.Manifest.Fields[f].Children) > 0 {
			nested = append(nested, f)
		}
	}
	if len(nested) == 0 {
		return nil
	}
	leaves, err := leafColumns(fr, nested)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: corrupt Parquet row group %d: %v", ErrRead, rg, p)
		}
	}()
	rgr := pf.RowGroup(rg)
	for _, c := range leaves {
		cr, err := rgr.Column(c)
		if err != nil {
			return fmt.Errorf("%w: row group %d: %w", ErrRead, rg, err)
		}
		s, ok := cr.(interface{ Skip(int64) (int64, error) })
		for ok && cr.HasNext() {
			n, err := s.Skip(1 << 16)
			if err != nil {
				return fmt.Errorf("%w: row group %d, column %s: %w", ErrRead, rg, cr.Descriptor().Path(), err)
			}
			if n == 0 {
				break
			}
		}
		if err := cr.Err(); err != nil {
			return fmt.Errorf("%w: row group %d, column %s: %w", ErrRead, rg, cr.Descriptor().Path(), err)
		}
	}
	return nil
}

// leafColumns returns the Parquet leaf columns of the top-level fields
// (a struct or list field has several, in schema order).
func leafColumns(fr *pqarrow.FileReader, fields []int) ([]int, error) {
	var leaves []int
	var walk func(f *pqarrow.SchemaField)
	walk = func(f *pqarrow.SchemaField) {
		if f.IsLeaf() {
			leaves = append(leaves, f.ColIndex)
		}
		for i := range f.Children {
			walk(&f.Children[i])
		}
	}
	for _, f := range fields {
		if f < 0 || f >= len(fr.Manifest.Fields) {
			return nil, fmt.Errorf("%w: field %d not in the file's schema", ErrRead, f)
		}
		walk(&fr.Manifest.Fields[f])
	}
	return leaves, nil
}

// cellGetter returns a function giving the text of row i of col (a
// string, binary, dictionary of strings, integer or float column), with
// false for a null.
func cellGetter(col arrow.Array, buf *[]byte) (func(i int) ([]byte, bool), error) {
	switch c := col.(type) {
	case *array.String:
		return func(i int) ([]byte, bool) { return []byte(c.Value(i)), c.IsValid(i) }, nil
	case *array.LargeString:
		return func(i int) ([]byte, bool) { return []byte(c.Value(i)), c.IsValid(i) }, nil
	case *array.Binary:
		return func(i int) ([]byte, bool) { return c.Value(i), c.IsValid(i) }, nil
	case *array.LargeBinary:
		return func(i int) ([]byte, bool) { return c.Value(i), c.IsValid(i) }, nil
	case *array.Dictionary:
		inner, err := cellGetter(c.Dictionary(), buf)
		if err != nil {
			return nil, err
		}
		return func(i int) ([]byte, bool) {
			if !c.IsValid(i) {
				return nil, false
			}
			return inner(c.GetValueIndex(i))
		}, nil
	case interface {
		arrow.Array
		Value(int) int64
	}:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendInt((*buf)[:0], c.Value(i), 10)
			return *buf, c.IsValid(i)
		}, nil
	case *array.Int32:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendInt((*buf)[:0], int64(c.Value(i)), 10)
			return *buf, c.IsValid(i)
		}, nil
	case *array.Int16:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendInt((*buf)[:0], int64(c.Value(i)), 10)
			return *buf, c.IsValid(i)
		}, nil
	case *array.Uint32:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendUint((*buf)[:0], uint64(c.Value(i)), 10)
			return *buf, c.IsValid(i)
		}, nil
	case *array.Uint64:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendUint((*buf)[:0], c.Value(i), 10)
			return *buf, c.IsValid(i)
		}, nil
	case *array.Float64:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendFloat((*buf)[:0], c.Value(i), 'f', -1, 64)
			return *buf, c.IsValid(i)
		}, nil
	case *array.Float32:
		return func(i int) ([]byte, bool) {
			*buf = strconv.AppendFloat((*buf)[:0], float64(c.Value(i)), 'f', -1, 32)
			return *buf, c.IsValid(i)
		}, nil
	}
	return nil, fmt.Errorf("type %s: want a string, integer or float column", col.DataType())
}

// mediaCellGetter is cellGetter for an image or audio column, which may
// also be a struct of "bytes" (binary) and "path" (string), as Hugging
// Face datasets store their Image and Audio features, or a list of such
// structs, of binary or of strings (a Sequence of them). Those cells are
// given as JSON (bytes as base64), which appendMediaCell reads; a plain
// binary or string cell is given as it is.
func mediaCellGetter(col arrow.Array, buf *[]byte) (func(i int) ([]byte, bool), error) {
	switch col.(type) {
	case *array.Struct, *array.List, *array.LargeList:
	default:
		return cellGetter(col, buf)
	}
	js, err := mediaJSON(col)
	if err != nil {
		return nil, err
	}
	var own []byte
	return func(i int) ([]byte, bool) {
		if !col.IsValid(i) {
			return nil, false
		}
		own = js(own[:0], i)
		return own, true
	}, nil
}

// mediaJSON returns a function appending row i of col as JSON: a struct
// of bytes and path as {"bytes": "<base64>"|null, "path": "…"|null}, a
// binary value as {"bytes": "<base64>"}, a string as a string, a list as
// an array of those; null as null.
func mediaJSON(col arrow.Array) (func(dst []byte, i int) []byte, error) {
	null := func(dst []byte) []byte { return append(dst, "null"...) }
	switch c := col.(type) {
	case *array.Struct:
		st := c.DataType().(*arrow.StructType)
		var bytesGet, pathGet func(int) ([]byte, bool)
		var scratch []byte
		for f, fl := range st.Fields() {
			g, err := cellGetter(c.Field(f), &scratch)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", fl.Name, err)
			}
			switch fl.Name {
			case "bytes":
				bytesGet = g
			case "path":
				pathGet = g
			}
		}
		if bytesGet == nil && pathGet == nil {
			return nil, fmt.Errorf("type %s: a media struct needs a \"bytes\" or a \"path\" field (Hugging Face's Image and Audio)", col.DataType())
		}
		return func(dst []byte, i int) []byte {
			if !c.IsValid(i) {
				return null(dst)
			}
			dst = append(dst, `{"bytes":`...)
			if v, ok := get(bytesGet, i); ok {
				dst = append(dst, '"')
				dst = base64.StdEncoding.AppendEncode(dst, v)
				dst = append(dst, '"')
			} else {
				dst = null(dst)
			}
			dst = append(dst, `,"path":`...)
			if v, ok := get(pathGet, i); ok {
				dst = jsonx.AppendString(dst, string(v))
			} else {
				dst = null(dst)
			}
			return append(dst, '}')
		}, nil
	case *array.List:
		return listJSON(c, c.ListValues(), c.ValueOffsets)
	case *array.LargeList:
		return listJSON(c, c.ListValues(), c.ValueOffsets)
	}
	var scratch []byte
	g, err := cellGetter(col, &scratch)
	if err != nil {
		return nil, err
	}
	binary := col.DataType().ID() == arrow.BINARY || col.DataType().ID() == arrow.LARGE_BINARY
	if d, ok := col.DataType().(*arrow.DictionaryType); ok {
		binary = d.ValueType.ID() == arrow.BINARY || d.ValueType.ID() == arrow.LARGE_BINARY
	}
	return func(dst []byte, i int) []byte {
		v, ok := g(i)
		switch {
		case !ok:
			return null(dst)
		case binary:
			dst = append(dst, `{"bytes":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, v)
			return append(dst, `"}`...)
		}
		return jsonx.AppendString(dst, string(v))
	}, nil
}

// listJSON is mediaJSON for a list column.
func listJSON(c arrow.Array, values arrow.Array, offsets func(int) (int64, int64)) (func(dst []byte, i int) []byte, error) {
	elem, err := mediaJSON(values)
	if err != nil {
		return nil, fmt.Errorf("list of %w", err)
	}
	return func(dst []byte, i int) []byte {
		if !c.IsValid(i) {
			return append(dst, "null"...)
		}
		start, end := offsets(i)
		dst = append(dst, '[')
		for j := start; j < end; j++ {
			if j > start {
				dst = append(dst, ',')
			}
			dst = elem(dst, int(j))
		}
		return append(dst, ']')
	}, nil
}

// get calls g, nil meaning absent.
func get(g func(int) ([]byte, bool), i int) ([]byte, bool) {
	if g == nil {
		return nil, false
	}
	return g(i)
}

// cell reads row i with get. A damaged file can hold a column whose
// offsets or dictionary indices point past its buffers, which Arrow's
// accessors do not check: the panic that follows is the file's error.
func (d *parquetDecoder) cell(get func(int) ([]byte, bool), i int) (v []byte, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: corrupt Parquet column in row group %d (%v); the file is damaged: write it again", ErrRead, d.rg-1, p)
		}
	}()
	v, ok = get(i)
	return v, ok, nil
}

func (d *parquetDecoder) next(row *Row) error {
	for d.rec == nil || int64(d.i) >= d.rec.NumRows() {
		if err := d.load(); err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			pe := d.r.fileErr(d.row+1, "", err)
			d.r.lr.ioErr = pe
			return pe
		}
	}
	i := d.i
	d.i++
	resetRow(row, d.row+int64(i)+1)
	var cells [nTableCols]tableCell
	for k, get := range d.get {
		if get == nil {
			continue
		}
		v, ok, err := d.cell(get, i)
		if err != nil {
			return d.r.fileErr(d.row+int64(i)+1, d.cols.names[k], err)
		}
		if int64(len(v)) > maxParquetRow {
			return d.r.fileErr(d.row+int64(i)+1, d.cols.names[k], fmt.Errorf("%d bytes, over the %d-byte cap of a row; shorten it", len(v), maxParquetRow))
		}
		if ok {
			// Each cell gets its own copy: numbers share one buffer.
			cells[k] = tableCell{bytes.Clone(v), true}
		}
	}
	return d.r.fillTableRow(row, &d.cols, &cells, d.sessions)
}
