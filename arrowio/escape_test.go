package arrowio

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestJSONLEscapes: JSON Lines string cells are escaped as encoding/json
// escapes strings (internal/jsonx): \b, U+2028, U+2029, invalid UTF-8 as
// U+FFFD.
func TestJSONLEscapes(t *testing.T) {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Append("a\bb\u2028c\u2029d\xffe")
	a := b.NewArray()
	defer a.Release()
	w, err := cellWriterFor(arrow.BinaryTypes.String, a)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(w(nil, 0)), `"a\bb\u2028c\u2029d\ufffde"`; got != want {
		t.Errorf("cell %s, want %s", got, want)
	}
}
