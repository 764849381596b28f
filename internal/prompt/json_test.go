package prompt

import (
	"encoding/json"
	"testing"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", " the quick brown fox", "quote \" backslash \\ newline \n tab \t cr \r", "\x00\x01\x1f\x7f", "é日🎉", "\u2028\u2029", "bad \xff utf8 \xe2\x82"} {
		checkJSONString(t, s)
	}
}

func checkJSONString(t *testing.T, s string) {
	t.Helper()
	got := AppendJSONString([]byte("x"), s)
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json also escapes <, > and & for HTML; we do not need to.
	var back string
	if err := json.Unmarshal(got[1:], &back); err != nil {
		t.Fatalf("AppendJSONString(%q) = %s: not JSON: %v", s, got[1:], err)
	}
	var wantBack string
	if err := json.Unmarshal(want, &wantBack); err != nil {
		t.Fatal(err)
	}
	if back != wantBack || got[0] != 'x' {
		t.Fatalf("AppendJSONString(%q) decodes to %q, encoding/json's to %q", s, back, wantBack)
	}
}

func TestAppendJSONInts(t *testing.T) {
	if got := string(AppendJSONInts(nil, []int{1, 22, 333})); got != "[1,22,333]" {
		t.Errorf("got %s", got)
	}
	if got := string(AppendJSONInts(nil, nil)); got != "[]" {
		t.Errorf("got %s", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff", "\u2028", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSONString(t, s) })
}
