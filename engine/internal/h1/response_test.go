package h1

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type h1Case struct {
	name     string
	in       string
	status   int
	body     string
	ct       string
	reusable bool
	eof      bool   // the connection closes after in
	err      string // substring of the error; "" = none
}

var h1Cases = []h1Case{
	{name: "length", in: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
		status: 200, body: "hello", ct: "application/json", reusable: true},
	{name: "chunked SSE", in: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"e\r\ndata: {\"a\":1}\n\r\n7\r\n\ndata: \r\n1;ext=1\r\nx\r\n0\r\nTrailer: t\r\n\r\n",
		status: 200, body: "data: {\"a\":1}\n\ndata: x", ct: "text/event-stream; charset=utf-8", reusable: true},
	{name: "interim responses", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
		status: 201, body: "ok", reusable: true},
	{name: "no content", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, reusable: true},
	{name: "empty length", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, reusable: true},
	{name: "connection close", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 1\r\n\r\nx",
		status: 200, body: "x"},
	{name: "until close", in: "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n", eof: true,
		status: 200, body: "data: 1\n\ndata: 2\n\n", ct: "text/event-stream"},
	{name: "HTTP/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x"},
	{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", reusable: true},
	{name: "bare LF", in: "HTTP/1.1 500 Internal Server Error\nContent-Length: 3\n\nerr", status: 500, body: "err", reusable: true},
	{name: "error status", in: "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\n\r\n{}", status: 429, body: "{}", reusable: true},
	{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", eof: true, status: 200, body: "abc", err: "inside the response body"},
	{name: "no headers", in: "HTTP/1.1 200 OK\r\nContent-Le", eof: true, err: "before the response headers"},
	{name: "nothing", in: "", eof: true, err: "before the response headers"},
	{name: "chunk cut", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", eof: true, status: 200, body: "ab", err: "inside the response body"},
	{name: "bad status", in: "HTTP/2 200\r\n\r\n", err: "status line"},
	{name: "bad code", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: "status line"},
	{name: "bad header", in: "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", err: "header line"},
	{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: "Content-Length"},
	{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", err: "Content-Length"},
	{name: "gzip coding", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", err: "not supported"},
	{name: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 200, err: "chunk size"},
	{name: "chunk overrun", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", status: 200, body: "a", err: "longer than its size"},
}

// decodeAll runs the decoder over in, cut into the given pieces, as the
// sender does (a copy per read, decoded in place), and returns the body.
func decodeAll(d *decoder, pieces [][]byte, eof bool) (body []byte, err error) {
	for _, p := range pieces {
		b := append([]byte(nil), p...)
		for len(b) > 0 {
			n, used, err := d.decode(b)
			body = append(body, b[:n]...)
			if err != nil {
				return body, err
			}
			if d.done() {
				if used < len(b) {
					d.closing = true
				}
				return body, nil
			}
			b = b[used:]
		}
	}
	if eof {
		return body, d.eof()
	}
	return body, nil
}

func checkH1(t *testing.T, c h1Case, how string, pieces [][]byte) {
	t.Helper()
	var d decoder
	body, err := decodeAll(&d, pieces, c.eof)
	if c.err != "" {
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Fatalf("%s: error %v, want one with %q", how, err, c.err)
		}
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, errUnexpectedEOF) {
			t.Errorf("%s: error %v is neither malformed nor EOF", how, err)
		}
	} else if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	if string(body) != c.body {
		t.Errorf("%s: body %q, want %q", how, body, c.body)
	}
	if c.status != 0 && d.status != c.status {
		t.Errorf("%s: status %d, want %d", how, d.status, c.status)
	}
	if c.err == "" {
		if !d.done() {
			t.Errorf("%s: response not complete", how)
		}
		if d.reusable() != c.reusable {
			t.Errorf("%s: reusable %v, want %v", how, d.reusable(), c.reusable)
		}
		if string(d.contentType) != c.ct {
			t.Errorf("%s: content type %q, want %q", how, d.contentType, c.ct)
		}
	}
}

// TestDecoder: every response decodes the same whole, byte by byte and
// cut at every point (reads split anywhere, CRLFs included).
func TestDecoder(t *testing.T) {
	for _, c := range h1Cases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			checkH1(t, c, "whole", [][]byte{in})
			var bytewise [][]byte
			for i := range in {
				bytewise = append(bytewise, in[i:i+1])
			}
			checkH1(t, c, "byte by byte", bytewise)
			for i := 1; i < len(in); i++ {
				checkH1(t, c, "cut", [][]byte{in[:i], in[i:]})
			}
		})
	}
}

// TestDecoderReset: one decoder serves many responses.
func TestDecoderReset(t *testing.T) {
	var d decoder
	for i, c := range h1Cases {
		d.reset()
		body, err := decodeAll(&d, [][]byte{[]byte(c.in)}, c.eof)
		if (err != nil) != (c.err != "") || string(body) != c.body {
			t.Errorf("response %d (%s) after reuse: body %q err %v", i, c.name, body, err)
		}
	}
}

// TestDecoderLimits: endless headers and chunk lines are refused.
func TestDecoderLimits(t *testing.T) {
	var d decoder
	long := append([]byte("HTTP/1.1 200 OK\r\nX: "), bytes.Repeat([]byte("a"), maxHeaderBytes)...)
	if _, err := decodeAll(&d, [][]byte{long}, false); err == nil || !errors.Is(err, ErrMalformed) {
		t.Errorf("endless headers: %v", err)
	}
	d.reset()
	chunk := append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1"), bytes.Repeat([]byte("0"), maxChunkLine+1)...)
	if _, err := decodeAll(&d, [][]byte{chunk}, false); err == nil || !errors.Is(err, ErrMalformed) {
		t.Errorf("endless chunk line: %v", err)
	}
}

// TestDecoderAllocs: decoding a streamed response allocates nothing
// once the decoder's buffers have grown.
func TestDecoderAllocs(t *testing.T) {
	in := []byte(h1Cases[1].in)
	buf := make([]byte, len(in))
	var d decoder
	step := func() {
		d.reset()
		for b := buf[:copy(buf, in)]; len(b) > 0 && !d.done(); {
			_, used, err := d.decode(b)
			if err != nil {
				t.Fatal(err)
			}
			b = b[used:]
		}
	}
	step()
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Errorf("%.1f allocations per response, want 0", n)
	}
}

// FuzzDecoder: no input makes the decoder panic or loop, and where the
// reads are cut never changes the body, the status or the outcome.
func FuzzDecoder(f *testing.F) {
	for _, c := range h1Cases {
		f.Add([]byte(c.in), uint16(len(c.in)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint16) {
		var whole, split decoder
		b1, err1 := decodeAll(&whole, [][]byte{in}, true)
		k := int(cut) % (len(in) + 1)
		b2, err2 := decodeAll(&split, [][]byte{in[:k], in[k:]}, true)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("cut at %d changes the outcome: %v vs %v", k, err1, err2)
		}
		if err1 == nil && !bytes.Equal(b1, b2) {
			t.Fatalf("cut at %d changes the body: %q vs %q", k, b1, b2)
		}
		if whole.status != split.status {
			t.Fatalf("cut at %d changes the status: %d vs %d", k, whole.status, split.status)
		}
		if len(b1) > len(in) {
			t.Fatalf("body %d bytes from %d of input", len(b1), len(in))
		}
	})
}
