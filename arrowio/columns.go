package arrowio

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Cell helpers shared by the tables' builders (build.go, media.go,
// telemetry.go) and readers (read.go, media.go, telemetry.go): appending
// one value to a column builder, and finding a record's columns by name
// and reading one value back.

// The column appenders below assume capacity was reserved for the row
// (builders are reserved for a whole row group at a time), so they use the
// Unsafe appends: no capacity checks, no allocation.

// i64NZ appends v, or null when v is 0.
func i64NZ(b *array.Int64Builder, v int64) {
	if v == 0 {
		b.UnsafeAppendBoolToBitmap(false)
		return
	}
	b.UnsafeAppend(v)
}

// i64Known appends v, or null when v is negative (-1 = none).
func i64Known(b *array.Int64Builder, v int64) {
	if v < 0 {
		b.UnsafeAppendBoolToBitmap(false)
		return
	}
	b.UnsafeAppend(v)
}

// i32Known appends v, or null when v is negative (-1 = not reported).
func i32Known(b *array.Int32Builder, v int32) {
	if v < 0 {
		b.UnsafeAppendBoolToBitmap(false)
		return
	}
	b.UnsafeAppend(v)
}

// i32NZ appends v, or null when v is 0.
func i32NZ(b *array.Int32Builder, v int32) {
	if v == 0 {
		b.UnsafeAppendBoolToBitmap(false)
		return
	}
	b.UnsafeAppend(v)
}

// strNZ appends s, or null when s is empty. The bytes are copied.
func strNZ(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	// BinaryBuilder copies v, so viewing the string's bytes is safe and
	// avoids the []byte(s) conversion StringBuilder.Append may allocate.
	b.BinaryBuilder.Append(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// columns looks up a record's columns by name, collecting type errors.
type columns struct {
	rec  arrow.Record
	errs []error
}

func (c *columns) col(name string) arrow.Array {
	idx := c.rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		c.errs = append(c.errs, fmt.Errorf("column %s missing", name))
		return nil
	}
	return c.rec.Column(idx[0])
}

// optCol is colAs for a column appended within a version: a file written
// before it has none, which is no error (the zero T is returned).
func optCol[T arrow.Array](c *columns, name string) T {
	if len(c.rec.Schema().FieldIndices(name)) == 0 {
		var zero T
		return zero
	}
	return colAs[T](c, name)
}

func colAs[T arrow.Array](c *columns, name string) T {
	a := c.col(name)
	t, ok := a.(T)
	if !ok && a != nil {
		var zero T
		c.errs = append(c.errs, fmt.Errorf("column %s has type %s, want %T", name, a.DataType(), zero))
	}
	return t
}

// strCol reads a utf8 or dictionary-of-utf8 column.
type strCol struct {
	s *array.String
	d *array.Dictionary
	v *array.String // dictionary values
}

func (c *columns) str(name string) strCol {
	switch a := c.col(name).(type) {
	case *array.String:
		return strCol{s: a}
	case *array.Dictionary:
		if v, ok := a.Dictionary().(*array.String); ok {
			return strCol{d: a, v: v}
		}
		c.errs = append(c.errs, fmt.Errorf("column %s: dictionary of %s, want utf8", name, a.Dictionary().DataType()))
	case nil:
	default:
		c.errs = append(c.errs, fmt.Errorf("column %s has type %s, want utf8", name, a.DataType()))
	}
	return strCol{}
}

// optStr is str for a column appended within a version: absent in older
// files, where every value reads as "".
func (c *columns) optStr(name string) strCol {
	if len(c.rec.Schema().FieldIndices(name)) == 0 {
		return strCol{}
	}
	return c.str(name)
}

func (s strCol) at(i int) string {
	switch {
	case s.s != nil:
		if s.s.IsNull(i) {
			return ""
		}
		return strings.Clone(boundString(s.s.Value(i)))
	case s.d != nil:
		if s.d.IsNull(i) {
			return ""
		}
		return strings.Clone(boundString(s.v.Value(s.d.GetValueIndex(i))))
	}
	return ""
}

func i64or(a *array.Int64, i int, absent int64) int64 {
	if a.IsNull(i) {
		return absent
	}
	return a.Value(i)
}

func i32or(a *array.Int32, i int, absent int32) int32 {
	if a.IsNull(i) {
		return absent
	}
	return a.Value(i)
}
