package reprise

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// TestConversationKey: a session drawn again ("a#2") is its dataset
// entry's conversation; another session, or a lone row, is not.
func TestConversationKey(t *testing.T) {
	a := conversationKey(&trace.Row{SessionID: "a"})
	for _, tt := range []struct {
		row  trace.Row
		same bool
	}{
		{trace.Row{SessionID: "a#2"}, true},
		{trace.Row{SessionID: "a#x"}, false}, // not a draw's number
		{trace.Row{SessionID: "b"}, false},
		{trace.Row{Index: 0}, false},
	} {
		if got := conversationKey(&tt.row) == a; got != tt.same {
			t.Errorf("%+v: same conversation as a %v, want %v", tt.row, got, tt.same)
		}
	}
	if conversationKey(&trace.Row{Index: 3}) == conversationKey(&trace.Row{Index: 4}) {
		t.Error("two lone rows share a conversation")
	}
}

// TestPreambleRows: rows with a text (or media) of their own take the
// conversation prompts; rows synthesized from lengths and complete
// requests are reported by line, at most 5 then a count.
func TestPreambleRows(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	ok := []trace.Row{{Line: 1, Raw: raw(`{"text_input":"hi"}`)}, {Line: 2, Raw: raw(`{"media":[]}`)}}
	if err := preambleRows("f.jsonl", ok); err != nil {
		t.Errorf("rows with their own text: %v", err)
	}
	bad := []trace.Row{{Line: 3, InputTokens: 40}, {Line: 4, Raw: raw(`{"messages":[]}`)}}
	err := preambleRows("f.jsonl", append(ok, bad...))
	if err == nil || !strings.Contains(err.Error(), "f.jsonl: line 3: the row is synthesized") || !strings.Contains(err.Error(), "line 4: the row carries a complete request") {
		t.Errorf("error %v: want lines 3 and 4 named", err)
	}
	var many []trace.Row
	for i := range 8 {
		many = append(many, trace.Row{Line: int64(i + 1)})
	}
	if err := preambleRows("f", many); err == nil || !strings.Contains(err.Error(), "… and 3 more rows") {
		t.Errorf("8 bad rows: %v, want 5 and a count", err)
	}
}
