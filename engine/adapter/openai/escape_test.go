package openai

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// TestBuildEscapes: the model name and a history's messages are escaped as
// encoding/json escapes strings (internal/jsonx): \b, U+2028, U+2029,
// invalid UTF-8 as U+FFFD.
func TestBuildEscapes(t *testing.T) {
	const s, want = "a\bb\u2028c\u2029d\xffe", `"a\bb\u2028c\u2029d\ufffde"`
	in, err := Adapter{Endpoint: Chat}.NewInstance(&adapter.Config{Model: s})
	if err != nil {
		t.Fatal(err)
	}
	var out adapter.HTTPRequest
	err = in.Build(&adapter.BuildInput{Flags: adapter.BuildHistory,
		Messages: []adapter.Message{{Role: "user", Content: s}, {Role: "assistant", Content: "ok"}, {Role: "user", Content: "x"}}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	body := string(out.Body)
	if !strings.Contains(body, `"model":`+want) || !strings.Contains(body, `"content":`+want) {
		t.Errorf("body %s: want the model and the first message as %s", body, want)
	}
}
