package trace

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriterEscapes: strings in written traces are escaped as
// encoding/json escapes them (internal/jsonx): \b, U+2028, U+2029,
// invalid UTF-8 as U+FFFD.
func TestWriterEscapes(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, FormatMooncake)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Row{SessionID: "a\bb\u2028c\u2029d\xffe", InputTokens: 1, OutputTokens: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := `"session_id": "a\bb\u2028c\u2029d\ufffde"`; !strings.Contains(buf.String(), want) {
		t.Errorf("line %s lacks %s", buf.String(), want)
	}
}
