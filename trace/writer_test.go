package trace

import (
	"io"
	"strings"
	"testing"
)

// TestWriterRefusesCumulativeMooncakeSession: a Mooncake session line
// holds only its turn's new tokens, so a row holding its session's whole
// context cannot be written as one (a replay would count the history
// twice); Bailian lines can hold it, and a cumulative row without a
// session is just a request.
func TestWriterRefusesCumulativeMooncakeSession(t *testing.T) {
	r := Row{Index: 3, SessionID: "s", Turn: 1, InputTokens: 40, OutputTokens: 5, Cumulative: true, ParentID: -1, RequestID: -1}
	w, _ := NewWriter(io.Discard, FormatMooncake)
	if err := w.Write(&r); err == nil || !strings.Contains(err.Error(), "row 3") || !strings.Contains(err.Error(), "Bailian") {
		t.Errorf("mooncake: %v, want a refusal naming the row and the fix", err)
	}
	b, _ := NewWriter(io.Discard, FormatBailian)
	if err := b.Write(&r); err != nil {
		t.Errorf("bailian: %v", err)
	}
	r.SessionID = ""
	if err := w.Write(&r); err != nil {
		t.Errorf("no session: %v", err)
	}
}
