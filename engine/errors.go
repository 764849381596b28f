package engine

// A failed request: its error kind and message, and the non-2xx response's.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/engine/record"
)

// readError reads a non-2xx net/http response and records it.
func (s *Sender) readError(ctx context.Context, resp *http.Response, r *record.Request) {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	r.EndNS = s.e.clock.Now()
	r.BytesReceived += int64(len(body))
	r.Reads++
	s.errType = resp.Header.Get("Content-Type")
	s.httpError(ctx, resp.StatusCode, body, err, r)
}

// httpError records a non-2xx response with (up to maxErrorBody of) its
// body and s.errType its Content-Type; readErr is how reading that body
// ended, if it failed.
func (s *Sender) httpError(ctx context.Context, status int, body []byte, readErr error, r *record.Request) {
	if readErr != nil && len(body) == 0 {
		kind, msg := classify(ctx, readErr)
		s.fail(r, kind, msg)
		return
	}
	msg := ""
	s.ctxID++
	if s.inst.Open(s.ctxID, 0) == nil {
		t0 := time.Now()
		s.batch.First = 0
		s.batch.Flags = adapter.BatchWholeBody | adapter.BatchEndOfStream
		s.batch.Events = append(s.batch.Events[:0], adapter.Event{Data: body, Flags: adapter.EventWholeBody | adapter.EventNonOK})
		s.recs, _ = s.inst.Parse(s.ctxID, &s.batch, s.recs[:0])
		if s.inst.Close(s.ctxID, &s.fin) == nil && len(s.fin.ErrorMessage) > 0 {
			msg = string(s.fin.ErrorMessage)
		}
		r.AdapterNS += int64(time.Since(t0))
	}
	s.fail(r, record.ErrHTTPStatus, statusMessage(status, s.errType, body, msg))
}

// errorBodyExcerpt is how many bytes of an error body that no adapter
// understood a message quotes.
const errorBodyExcerpt = 120

// statusMessage is the one-line error message of a non-2xx response:
// "HTTP 400 Bad Request: " and the adapter's message (parsed), else the
// body's first bytes with its whitespace collapsed. A body that is not
// JSON or plain text (an HTML page: a web server, not an inference
// server, answered) also gets its content type, its size and what was
// expected:
//
//	HTTP 501 Not Implemented (text/html, 469 bytes): <!DOCTYPE HTML> <html lang="en"> <head>…; expected an inference server's JSON
func statusMessage(status int, contentType string, body []byte, parsed string) string {
	head := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	if parsed != "" {
		return head + ": " + oneLine(parsed, maxErrorMessage)
	}
	text := oneLine(string(body), errorBodyExcerpt)
	if text == "" {
		return head + " (empty body)"
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "" || mt == "text/plain" || mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return head + ": " + text
	}
	return fmt.Sprintf("%s (%s, %d bytes): %s; expected an inference server's JSON: check the URL and the endpoint",
		head, mt, len(body), text)
}

// oneLine collapses the runs of white space of s (line breaks too) into
// single spaces and cuts it to at most n bytes, at a rune boundary, with
// "…" where it was cut.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}

// fail records an error on r (the first one wins).
func (s *Sender) fail(r *record.Request, kind record.ErrorKind, msg string) {
	if r.ErrorKind != record.ErrNone {
		return
	}
	r.ErrorKind = kind
	r.ErrorMessage = truncate(msg, maxErrorMessage)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

var errTimeout = errors.New("request timeout")

// classify maps a transport error to an error kind and a message.
func classify(ctx context.Context, err error) (record.ErrorKind, string) {
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, errTimeout) {
			return record.ErrTimeout, "request timed out (--timeout)"
		}
		if errors.Is(cause, errCancelAfter) {
			return record.ErrCancelled, "cancelled as planned (--cancel-rate, --cancel-after) before the response ended"
		}
		return record.ErrCancelled, "cancelled: " + cause.Error()
	}
	msg := err.Error()
	if errors.Is(err, h1.ErrBadHead) {
		return record.ErrBuild, msg // refused before a byte was written
	}
	if errors.Is(err, h1.ErrMalformed) {
		return record.ErrMalformed, msg // not HTTP/1.1: bad status line, headers or chunk framing
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return record.ErrConnect, msg
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return record.ErrConnect, msg
	}
	var tlsErr *tls.RecordHeaderError
	if errors.As(err, &tlsErr) {
		return record.ErrConnect, msg
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return record.ErrTimeout, msg
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return record.ErrTimeout, msg
	}
	if errors.Is(err, context.Canceled) {
		return record.ErrCancelled, msg
	}
	return record.ErrReset, msg
}
