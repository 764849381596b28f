package httpfield

import (
	"strings"
	"testing"
)

// TestCheck: names are tokens, values have no control character but tab,
// paths are visible ASCII; every refusal says what and where.
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        string // "" = valid
	}{
		{"X-Session-Id", "abc-1 2\t3 é", ""},
		{"X-Session-Id", "a\r\nX-Injected: yes", "holds a CR at byte 1"},
		{"X-Session-Id", "b\nx", "holds an LF at byte 1"},
		{"X-Session-Id", "a\x00", "holds a NUL at byte 1"},
		{"X-Session-Id", "\x1b[2J", "holds byte 0x1b at byte 0"},
		{"X-Session-Id", "\x7f", "holds byte 0x7f at byte 0"},
		{"X Session", "v", "is not a header name"},
		{"X-A\r\nB", "v", "is not a header name"},
		{"", "v", "is not a header name"},
	} {
		err := Check(tt.name, tt.value)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%q, %q): %v", tt.name, tt.value, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%q, %q): %v, want %q", tt.name, tt.value, err, tt.want)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{"/v1/chat/completions?x=1&y=%20", ""},
		{"/x\r\nX-Inj: 1", "holds a CR at byte 2"},
		{"/x y", "holds a space at byte 2"},
		{"/é", "holds byte 0xc3 at byte 1"},
	} {
		err := CheckPath(tt.path)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckPath(%q): %v", tt.path, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckPath(%q): %v, want %q", tt.path, err, tt.want)
		}
	}
}
