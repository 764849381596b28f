package engine

// Hot path: a request over reprise's HTTP/1.1 client (engine/internal/h1):
// the client writes, reads and stamps; the sender stamps the record and
// consumes the body. Allocation budget: TestH1SendAllocs.

import (
	"context"
	"strconv"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

var (
	_ h1.Handler = (*h1Handler)(nil)
	_ h1.Clock   = (*replay.Clock)(nil)
)

// doH1 is Do over reprise's HTTP/1.1 client.
func (s *Sender) doH1(ctx context.Context, p *Prepared, r *record.Request) {
	s.rsp = h1Handler{s: s, p: p, r: r}
	s.req = h1.Request{Head: s.requestHead(p, r.RequestID), Body: p.Body, Stream: p.Stream, Session: p.Session, EndSession: p.EndSession}
	if s.cancel != nil {
		s.req.Wrote = s.cancel.arm
	}
	err := s.call.Do(ctx, &s.req, &s.st, &s.rsp)
	ctx = s.cancel.ended(ctx, err) // nil-safe: no planned cancellation
	st := &s.st
	r.SentNS, r.WroteNS, r.HeadersNS, r.EndNS = st.Sent, st.Wrote, st.Headers, st.End
	r.BlockedNS, r.DNSNS, r.ConnectNS, r.ConnReused = st.Blocked, st.DNS, st.Connect, st.Reused
	r.Reads, r.BytesReceived, r.ReadLagNS = st.Reads, st.Bytes, st.ReadLag
	r.Retries, r.RetryErrors = st.Retries, st.RetryErrors
	s.deadline = st.Deadline // counting the output's tokens watches it too
	h := &s.rsp
	switch {
	case h.began:
		s.endBody(ctx, r, err)
	case h.errBody:
		if err == nil {
			err = h.limit
		}
		s.httpError(ctx, h.status, s.errBody, err, r)
	case h.head:
		// The adapter refused the body: recorded.
	case err != nil:
		kind, msg := classify(ctx, err)
		s.fail(r, kind, msg)
	}
	s.rsp = h1Handler{}
}

// requestHead renders p's request line and headers for HTTP/1.1 with the
// request id (the client ends the head).
func (s *Sender) requestHead(p *Prepared, id uint64) []byte {
	b := append(s.head[:0], p.Head...)
	b = append(b, "X-Request-Id: "...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, "\r\n"...)
	s.head = b
	return b
}

// Header starts the body of a 2xx response, or the collection of another
// status's body.
func (h *h1Handler) Header(resp *h1.Response, t int64) bool {
	s := h.s
	h.head = true
	h.status = resp.Status
	h.r.StatusCode = int32(resp.Status)
	if resp.Status < 200 || resp.Status >= 300 {
		h.errBody = true
		s.errBody = s.errBody[:0]
		s.errType = string(resp.ContentType)
		s.bodyBytes = 0
		return true
	}
	stream := h.p.Stream && (resp.MediaTypeIs("text/event-stream") ||
		(resp.MediaTypeIs("application/x-ndjson") && s.e.info.Framing == adapter.FramingNDJSON) ||
		s.e.info.Framing == adapter.FramingRaw) // raw: every read is an event (streamed audio)
	if err := s.beginBody(h.p, h.r, stream); err != nil {
		return false // recorded as an adapter failure
	}
	h.began = true
	if resp.ContentLength > s.e.maxBodyBytes {
		s.overCap(capBody) // no need to read it to know
		return false
	}
	return true
}

// Body consumes one read's body bytes.
func (h *h1Handler) Body(b []byte, t int64) bool {
	s := h.s
	switch {
	case h.began:
		s.feedBody(b, t)
		return s.parseErr == nil
	case h.errBody:
		if room := maxErrorBody - len(s.errBody); room > 0 {
			s.errBody = append(s.errBody, b[:min(len(b), room)]...)
		}
		// The rest is read only to reuse the connection, up to the body
		// cap.
		if s.bodyBytes += int64(len(b)); s.bodyBytes > s.e.maxBodyBytes {
			h.limit = &limitError{"body bytes", "--max-response-bytes", s.e.maxBodyBytes}
			return false
		}
	}
	return true
}
