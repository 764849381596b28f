package mockserver

import (
	"strings"
	"testing"
)

// TestRenderEscapes: error bodies, rendered model names and event-log
// lines escape strings as encoding/json does (internal/jsonx): \b,
// U+2028, U+2029, invalid UTF-8 as U+FFFD.
func TestRenderEscapes(t *testing.T) {
	const s, want = "a\bb\u2028c\u2029d\xffe", `a\bb\u2028c\u2029d\ufffde`
	if b := string(appendErrorBody(nil, false, 400, s, "")); !strings.Contains(b, `"message":"`+want+`"`) {
		t.Errorf("error body %s lacks %s", b, want)
	}
	var r renderer
	r.init(false, true, "id", s, 1)
	if !strings.Contains(string(r.head), `"model":"`+want+`"`) {
		t.Errorf("vLLM head %s lacks %s", r.head, want)
	}
	r.init(true, true, "id", s, 1)
	if !strings.Contains(string(r.tail), `"model":"`+want+`"`) {
		t.Errorf("llama.cpp tail %s lacks %s", r.tail, want)
	}
	if b := string(appendLogLine(nil, &RequestLog{Error: s})); !strings.Contains(b, `"error":"`+want+`"`) {
		t.Errorf("log line %s lacks %s", b, want)
	}
}
