package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/trace"
)

// TestContextModeGrows: which rows take part in history growth, per mode.
func TestContextModeGrows(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	rows := map[string]trace.Row{
		"independent":           {InputTokens: 10},
		"mooncake session":      {SessionID: "s", InputTokens: 10},
		"mooncake text_input":   {SessionID: "s", Raw: raw(`{"text_input":"hi"}`)},
		"bailian":               {SessionID: "s", InputTokens: 10, Cumulative: true},
		"mooncake messages":     {SessionID: "s", Raw: raw(`{"messages":[{"role":"user","content":"x"}]}`), Cumulative: true},
		"mooncake payload":      {SessionID: "s", Raw: raw(`{"payload":{"model":"m"}}`), Cumulative: true},
		"aiperf single session": {SessionID: "s", Raw: raw(`{"text":"hi"}`), Cumulative: true},
	}
	want := map[ContextMode][]string{
		ContextAuto:          {"mooncake session", "mooncake text_input"},
		ContextHistory:       {"aiperf single session", "mooncake session", "mooncake text_input"},
		ContextSelfContained: nil,
	}
	for mode, w := range want {
		var got []string
		for _, name := range []string{"aiperf single session", "bailian", "independent", "mooncake messages", "mooncake payload", "mooncake session", "mooncake text_input"} {
			r := rows[name]
			if mode.Grows(&r) {
				got = append(got, name)
			}
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", mode, d)
		}
	}
}

// TestContextModeCheck: history mode refuses rows it cannot grow, naming
// them; the other modes accept them.
func TestContextModeCheck(t *testing.T) {
	rows := []trace.Row{
		{Index: 0, Line: 1, SessionID: "1", InputTokens: 40, Cumulative: true},
		{Index: 1, Line: 2, SessionID: "2", Raw: json.RawMessage(`{"payload":{"model":"m"}}`), Cumulative: true},
		{Index: 2, Line: 3, SessionID: "3", InputTokens: 40},
	}
	for _, m := range []ContextMode{"", ContextAuto, ContextSelfContained} {
		if err := m.Check(rows); err != nil {
			t.Errorf("%q: %v", m, err)
		}
	}
	err := ContextHistory.Check(rows)
	for _, part := range []string{"row 0 (line 1)", "count it twice", "row 1 (line 2)", "complete request", "context mode auto"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("history: %v, want it to mention %q", err, part)
		}
	}
	if err := ContextMode("deltas").Validate(); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestSpliceHistoryMessages: a HoleMessages hole gets the conversation
// when the request carries a history.
func TestSpliceHistoryMessages(t *testing.T) {
	in := &adapter.BuildInput{Flags: adapter.BuildHistory, PromptText: "q1a1q2",
		Messages: []adapter.Message{{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a\"1"}, {Role: "user", Content: "q2"}}}
	body := []byte(`{"messages":}`)
	got, err := splice(body, []adapter.Hole{{Offset: len(`{"messages":`), Kind: adapter.HoleMessages}}, in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":"q1"},{"role":"assistant","content":"a\"1"},{"role":"user","content":"q2"}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
