package testfiles

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestRepeated checks that the first copy is the original byte for byte,
// that the next starts over with shifted timestamps, and that the result has
// the rows asked for.
func TestRepeated(t *testing.T) {
	const name = "mooncake/conversation_trace.jsonl"
	orig := TraceBytes(t, name)
	n := bytes.Count(orig, []byte("\n"))
	got := Repeated(t, name, 2*n+3)
	if c := bytes.Count(got, []byte("\n")); c != 2*n+3 {
		t.Fatalf("%d rows, want %d", c, 2*n+3)
	}
	if !bytes.HasPrefix(got, orig) {
		t.Fatal("the first copy is not the original")
	}
	second := strings.SplitN(string(got[len(orig):]), "\n", 2)[0]
	first := strings.SplitN(string(orig), "\n", 2)[0]
	want := strings.Replace(first, `"timestamp": 0,`, `"timestamp": 3540000,`, 1)
	if second != want {
		t.Errorf("second copy starts with\n%s\nwant\n%s", second, want)
	}
	var w bytes.Buffer
	WriteRepeated(t, &w, name, 2*n+3)
	if !bytes.Equal(w.Bytes(), got) {
		t.Error("WriteRepeated differs from Repeated")
	}
}

func TestRepeatRefuses(t *testing.T) {
	for _, in := range []string{"", "{\"ts\": 1}\n", "{\"timestamp\": x}\n"} {
		if err := repeat(io.Discard, []byte(in), 3, 10); err == nil {
			t.Errorf("repeat(%q): no error", in)
		}
	}
}
