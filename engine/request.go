package engine

// Hot path: one HTTP request (do), sent over reprise's HTTP/1.1 client
// (h1.go) or HTTP/2, whose response is read here (read). Timestamps are
// taken right after each read returns, before any framing or parsing.
// Allocation budget: TestSSEAllocs covers the read → frame → classify loop.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// do is Do for one HTTP request.
func (s *Sender) do(ctx context.Context, p *Prepared, r *record.Request) {
	e := s.e
	defer func() { s.firstTok = nil }()
	s.events = s.events[:0]
	s.deadline = time.Time{}
	s.fin = adapter.Final{} // Response of a request that never got a body: nothing
	r.InputTokens = p.InputTokens
	r.TraceInputTokens = p.TraceInputTokens
	r.MaxTokens = p.MaxTokens
	r.ExpectedCachedTokens = p.ExpectedCachedTokens
	r.SetMedia(&p.Media)
	r.ServerPromptTokens, r.ServerCompletionTokens = -1, -1
	r.ServerReasoningTokens, r.ServerCachedTokens = -1, -1
	r.ServerMinusClientOutputTokens = record.NoTokenDiff
	r.AdapterNS = p.BuildNS
	r.CancelAfterNS = int64(p.CancelAfter)
	if p.Err != nil {
		now := e.clock.Now()
		r.SentNS, r.EndNS = now, now
		kind := p.ErrKind
		if kind == record.ErrNone {
			kind = record.ErrBuild
		}
		s.fail(r, kind, p.Err.Error())
		return
	}
	if p.CancelAfter > 0 {
		// A planned cancellation: its timer starts when the request was
		// written whole (s.cancel.arm) and cancels ctx with cause
		// errCancelAfter unless the response ended first.
		var cancel context.CancelCauseFunc
		s.cancel = newCancelPlan(p.CancelAfter, ctx)
		ctx, cancel = context.WithCancelCause(ctx)
		s.cancel.cancel = cancel
		defer func() {
			s.cancel.stop()
			s.cancel = nil
			cancel(nil)
		}()
	}
	if s.call != nil {
		s.doH1(ctx, p, r)
		return
	}
	// HTTP/2: net/http's client over x/net's transport.
	if e.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, e.cfg.Timeout, errTimeout)
		defer cancel()
	}
	// No retries of our own: a failed request may have reached the
	// server. x/net re-sends by itself only what it never wrote (GetBody
	// is nil).
	s.pt = newPhaseTrace(e.clock, s.cancel)
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &s.pt.trace), p.Method, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		now := e.clock.Now()
		r.SentNS, r.EndNS = now, now
		s.fail(r, record.ErrBuild, err.Error())
		return
	}
	req.Header = p.Header
	// X-Request-Id joins our rows to server logs; a Prepared is sent
	// once, so setting it in place is safe.
	p.Header["X-Request-Id"] = []string{strconv.FormatUint(r.RequestID, 10)}
	req.ContentLength = int64(len(p.Body))
	req.GetBody = nil // never let net/http re-send silently
	sent := e.clock.Now()
	r.SentNS = sent
	resp, err := e.client.Do(req)
	now := e.clock.Now()
	if err != nil {
		s.phases(r)
		r.EndNS = now
		kind, msg := classify(ctx, err)
		s.fail(r, kind, msg)
		return
	}
	r.HeadersNS = now
	s.phases(r)
	r.StatusCode = int32(resp.StatusCode)
	s.read(ctx, p, resp, r)
}

func (s *Sender) phases(r *record.Request) {
	p := s.pt
	get, got := p.getConn.Load(), p.gotConn.Load()
	dns := span(p.dnsStart.Load(), p.dnsDone.Load())
	conn := span(p.connStart.Load(), p.connDone.Load())
	tlsT := span(p.tlsStart.Load(), p.tlsDone.Load())
	r.WroteNS = p.wrote.Load()
	r.ConnReused = p.reused.Load()
	if get != 0 && got >= get {
		r.BlockedNS = got - get
		if !r.ConnReused {
			// Blocked is pool wait only: dial time is reported apart.
			r.BlockedNS = max(r.BlockedNS-dns-conn-tlsT, 0)
		}
	}
	r.DNSNS = dns
	r.ConnectNS = conn + tlsT
}

// span returns b − a when both happened in order, else 0.
func span(a, b int64) int64 {
	if a != 0 && b > a {
		return b - a
	}
	return 0
}

// read consumes a net/http response (HTTP/2), stamping every read when
// it returns.
func (s *Sender) read(ctx context.Context, p *Prepared, resp *http.Response, r *record.Request) {
	e := s.e
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		s.readError(ctx, resp, r)
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	stream := p.Stream && ct == "text/event-stream"
	if p.Stream && (ct == "application/x-ndjson" && e.info.Framing == adapter.FramingNDJSON || e.info.Framing == adapter.FramingRaw) {
		stream = true
	}
	if err := s.beginBody(p, r, stream); err != nil {
		return
	}
	if resp.ContentLength > e.maxBodyBytes {
		s.overCap(capBody)
		r.EndNS = r.HeadersNS
		s.endBody(ctx, r, nil)
		return
	}
	if s.buf == nil {
		s.buf = make([]byte, DefaultReadBuffer)
	}
	var readErr error
	var t int64
	for {
		n, err := resp.Body.Read(s.buf)
		// Stamp first, then look at the bytes.
		t = e.clock.Now()
		if n > 0 {
			r.Reads++
			r.BytesReceived += int64(n)
			s.feedBody(s.buf[:n], t)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		if s.parseErr != nil {
			break // malformed stream: stop reading, the request failed
		}
	}
	r.EndNS = t // the last read's, the one that saw the end (or the error)
	ctx = s.cancel.ended(ctx, readErr)
	s.endBody(ctx, r, readErr)
}
