package engine

import (
	"encoding/json"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// escapeText holds everything JSON escapers disagree on: a control
// character with a short escape, U+2028, U+2029 and invalid UTF-8.
const (
	escapeText    = "a\bb\u2028c\u2029d\xffe<&>"
	escapeWant    = `a\bb\u2028c\u2029d\ufffde<&>`
	escapeContent = `"` + escapeWant + `"`
)

// TestSpliceEscapes: a prompt spliced into a body at a text or messages
// hole, and a history's messages, are escaped as encoding/json escapes
// strings (internal/jsonx), so the body stays valid JSON.
func TestSpliceEscapes(t *testing.T) {
	body := []byte(`{"p":"","m":}`)
	holes := []adapter.Hole{{Offset: 6, Kind: adapter.HolePromptText}, {Offset: 12, Kind: adapter.HoleMessages}}
	got, err := splice(body, holes, &adapter.BuildInput{PromptText: escapeText})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"p":` + escapeContent + `,"m":[{"role":"user","content":` + escapeContent + `}]}`
	if string(got) != want || !json.Valid(got) {
		t.Errorf("splice:\n%s\nwant\n%s", got, want)
	}
	msgs := appendMessages(nil, []adapter.Message{{Role: "user", Content: escapeText}})
	if want := `[{"role":"user","content":` + escapeContent + `}]`; string(msgs) != want {
		t.Errorf("appendMessages:\n%s\nwant\n%s", msgs, want)
	}
}
