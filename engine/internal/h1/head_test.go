package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/textproto"
	"strings"
	"testing"
)

// TestDoRefusesBadHead: whoever built a head, Do writes none whose bytes
// would read as more than one request line and its header lines (a bare
// CR or LF, an empty line inside the head, NUL or another control
// character in a value, a space in the path): it returns ErrBadHead, and
// the server receives nothing, not even a connection.
func TestDoRefusesBadHead(t *testing.T) {
	srv := startScript(t, func(int) (string, bool) { return okResponse(), false })
	c := newClient(t, srv.url(), nil)
	k := c.NewCaller()
	defer k.Close()
	line := string(c.AppendRequestLine(nil, "POST", "/v1/chat/completions"))
	for _, tt := range []struct{ name, head string }{
		{"smuggled request", line + "X-S: b\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n"},
		{"bare LF", line + "X-S: a\nX-Injected: yes\r\nContent-Length: 0\r\n"},
		{"bare CR", line + "X-S: a\rX-Injected: yes\r\nContent-Length: 0\r\n"},
		{"NUL", line + "X-S: a\x00\r\nContent-Length: 0\r\n"},
		{"ESC", line + "X-S: \x1b[2J\r\nContent-Length: 0\r\n"},
		{"space in name", line + "X S: a\r\nContent-Length: 0\r\n"},
		{"folded line", line + "X-S: a\r\n X-Injected: yes\r\nContent-Length: 0\r\n"},
		{"path with space", "POST /x y HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n"},
		{"path with CRLF", "POST /x\r\nX-Inj: 1 HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n"},
		{"no CRLF", "POST /x HTTP/1.1"},
	} {
		var st Stamps
		err := k.Do(context.Background(), &Request{Head: []byte(tt.head)}, &st, &recorder{})
		if !errors.Is(err, ErrBadHead) {
			t.Errorf("%s: Do = %v, want ErrBadHead", tt.name, err)
		}
		if st.Wrote != 0 || st.Sent == 0 || st.End < st.Sent {
			t.Errorf("%s: stamps %+v, want Sent and End, nothing written", tt.name, st)
		}
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Errorf("the server accepted %d connections, want none", n)
	}
	// A valid head still goes out.
	var st Stamps
	if err := k.Do(context.Background(), chat(c, false, "X-S: a\tb, é"), &st, &recorder{}); err != nil {
		t.Fatalf("a valid head: %v", err)
	}
}

// FuzzCheckHead: every head checkHead lets through is read by a strict
// HTTP/1.1 reader (net/textproto, as net/http's server reads) as one
// request line of three fields and header lines, one per CRLF-ended line
// of the head, with nothing after the blank line Do adds: no head it
// accepts carries a header or a request more than its lines show.
func FuzzCheckHead(f *testing.F) {
	for _, s := range []string{
		"POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n",
		"GET /x?a=1 HTTP/1.1\r\nHost: h\r\nX-A: 1, 2\t3\r\n",
		"POST /x HTTP/1.1\r\nX-S: b\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\n",
		"POST /x HTTP/1.1\r\nX-S: a\nX-Injected: yes\r\n",
		"POST /x y HTTP/1.1\r\nHost: h\r\n",
		"POST /x HTTP/1.1\r\nX-S: a\r\n X-Injected: yes\r\n",
		"POST /x HTTP/1.1\r\nX-S:\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if checkHead(head) != nil {
			return
		}
		lines := bytes.Count(head, []byte("\r\n"))
		tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(bytes.Clone(head), "\r\n"...))))
		line, err := tp.ReadLine()
		if err != nil || len(strings.Split(line, " ")) != 3 {
			t.Fatalf("request line %q (%v) of %q", line, err, head)
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			t.Fatalf("headers of %q: %v", head, err)
		}
		if rest, _ := io.ReadAll(tp.R); len(rest) > 0 {
			t.Fatalf("%q follows the head %q: a second request", rest, head)
		}
		n := 0
		for _, vs := range h {
			n += len(vs)
		}
		if n != lines-1 {
			t.Fatalf("%d header lines read, the head has %d: %q", n, lines-1, head)
		}
	})
}
