package reprise

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/trace"
)

// TestHistoryRoles: a session's turns in turn order (not file order): the
// first is built ahead, the others on the send path, and every turn but
// the last keeps its response. A session of one row and rows of other
// modes take no part; a source that cannot grow histories is refused.
func TestHistoryRoles(t *testing.T) {
	rows := []trace.Row{
		{SessionID: "a", Turn: 0, InputTokens: 5},
		{SessionID: "a", Turn: 2, InputTokens: 5},
		{SessionID: "b", Turn: 0, InputTokens: 5},
		{SessionID: "a", Turn: 1, InputTokens: 5},
		{InputTokens: 5},
		{SessionID: "c", Turn: 0, InputTokens: 5, Cumulative: true},
		{SessionID: "c", Turn: 1, InputTokens: 9, Cumulative: true},
	}
	h, err := newHistories(engine.ContextAuto, rows, fakeSessions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint8{roleFirst | roleCapture, roleLater, 0, roleLater | roleCapture, 0, 0, 0}
	if d := cmp.Diff(want, h.roles); d != "" {
		t.Errorf("roles (-want +got):\n%s", d)
	}
	if h, err := newHistories(engine.ContextSelfContained, rows, fakeSessions{}, nil); h != nil || err != nil {
		t.Errorf("self-contained: %v, %v; want no histories", h, err)
	}
	if _, err := newHistories(engine.ContextAuto, rows, wordPrompts{}, nil); err == nil {
		t.Error("a prompt source without sessions was accepted")
	}
}

// fakeSessions grows histories of words (for role tests).
type fakeSessions struct{ wordPrompts }

func (fakeSessions) NewSession() engine.SessionPrompts { return &fakeSession{} }

type fakeSession struct{ msgs []adapter.Message }

func (s *fakeSession) Prompt(row *trace.Row, in *adapter.BuildInput) (int, int, error) {
	in.Messages = append(s.msgs, adapter.Message{Role: "user", Content: strings.Repeat("hello ", row.InputTokens)})
	return row.InputTokens, -1, nil
}

func (s *fakeSession) Record(row *trace.Row, response string) error {
	s.msgs = append(s.msgs, adapter.Message{Role: "user", Content: strings.Repeat("hello ", row.InputTokens)},
		adapter.Message{Role: "assistant", Content: response})
	return nil
}
