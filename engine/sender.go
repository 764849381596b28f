package engine

// Hot path: sending one request and reading its response. Timestamps are
// taken right after each read returns, before any framing or parsing.
// Allocation budget: TestSSEAllocs covers the read → frame → classify loop.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/internal/h1"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// Sender sends requests one at a time with its own adapter instance and
// buffers. It is not safe for concurrent use: each long-lived sender
// goroutine owns one.
type Sender struct {
	e      *Engine
	inst   adapter.Instance
	buf    []byte // HTTP/2's read buffer (the h1 Caller has its own)
	framer sseFramer
	recs   []adapter.Record
	batch  adapter.Batch
	fin    adapter.Final
	ctxID  uint32

	// Per-response event table (index = event index).
	evTime  []int64
	evBytes []int32
	evRead  []int32 // events completed by the read that completed it
	evKind  []record.EventKind
	// Client token counting and exported rows (tokens.go): the
	// text-captured records, each event's first row's choice, kind and
	// tokens (grown as records arrive, with Config.Events), the rows of
	// further choices, and scratch space.
	texts     []textRec
	evChoice  []int32
	evRowKind []record.EventKind
	evTokens  []int32
	xrows     []xrow
	order     []int32
	seg       []byte
	ids       []int
	// Deferred parsing keeps every event's bytes until the end.
	defArena []byte
	defRefs  []frameRef

	// Events of the last request (when Config.Events), owned by the sender
	// until the next Do.
	events []record.Event

	// Body consumption (beginBody … endBody).
	stream    bool
	parseErr  error // also a cap's *limitError: reading stops either way
	over      bool  // the response went over a cap (parseErr says which)
	bodyBytes int64
	adapterT  int64
	whole     []byte // a non-streaming body
	// deadline is when --timeout ends the request being read (HTTP/1.1;
	// zero: none, or HTTP/2, whose ctx carries it).
	deadline time.Time

	// reprise's HTTP/1.1 client (h1.go): this sender's caller, the
	// request and its stamps, the response handler, the request head
	// buffer and a non-2xx body. Fields, so that Do allocates none of
	// them.
	call    *h1.Caller
	req     h1.Request
	st      h1.Stamps
	rsp     h1Handler
	head    []byte
	errBody []byte
	// errType is the Content-Type of the non-2xx response being read.
	errType string

	// cancel is the planned cancellation of the request being sent (nil
	// when none).
	cancel *cancelPlan

	// jb renders the follow-up requests of a job (job.go), lazily.
	jb *Builder
	// firstTok is told of the first token of the request being read
	// (NotifyFirstToken); nil once told, or when none was given.
	firstTok FirstTokenNotifier

	// pt is the httptrace state of the current attempt (HTTP/2). net/http may run
	// a dial started for one attempt after that attempt ended (and hand
	// the connection to another), so every attempt gets a fresh one and
	// its fields are atomics.
	pt *phaseTrace
}

// NewSender returns a sender with its own adapter instance.
func (e *Engine) NewSender() (*Sender, error) {
	inst, err := e.cfg.Adapter.NewInstance(&e.cfg.AdapterConfig)
	if err != nil {
		return nil, err // it names the adapter
	}
	s := &Sender{e: e, inst: inst} // buf on the first response: many senders of a big pool never run
	s.framer.max = e.maxEventBytes
	if e.h1c != nil {
		s.call = e.h1c.NewCaller()
	}
	return s, nil
}

// Close releases the sender's adapter instance and its HTTP/1.1
// caller's cancellation hook.
func (s *Sender) Close() error {
	if s.call != nil {
		s.call.Close()
	}
	return s.inst.Release()
}

// Events returns the events of the last request (nil unless
// Config.Events). The slice is owned by the sender until its next Do.
func (s *Sender) Events() []record.Event { return s.events }

// Response returns the assistant text of the last request, as AIPerf
// appends it to a session's history: the content, or the reasoning text
// when the content is empty. It is captured only when the Prepared asked
// for it (Capture), Config.CaptureText is set or a token counter is
// configured; nil otherwise or when
// nothing arrived. The slice is owned by the sender until its next Do.
func (s *Sender) Response() []byte {
	if len(s.fin.Text) > 0 {
		return s.fin.Text
	}
	return s.fin.Reasoning
}

// phaseTrace collects the httptrace points of one attempt.
type phaseTrace struct {
	clock               *replay.Clock
	getConn, gotConn    atomic.Int64
	dnsStart, dnsDone   atomic.Int64
	connStart, connDone atomic.Int64
	tlsStart, tlsDone   atomic.Int64
	wrote, firstByte    atomic.Int64
	reused              atomic.Bool
	trace               httptrace.ClientTrace
}

func newPhaseTrace(c *replay.Clock, cp *cancelPlan) *phaseTrace {
	p := &phaseTrace{clock: c}
	p.trace = httptrace.ClientTrace{
		GetConn: func(string) { p.getConn.Store(c.Now()) },
		GotConn: func(info httptrace.GotConnInfo) {
			p.gotConn.Store(c.Now())
			p.reused.Store(info.Reused)
		},
		DNSStart:          func(httptrace.DNSStartInfo) { p.dnsStart.Store(c.Now()) },
		DNSDone:           func(httptrace.DNSDoneInfo) { p.dnsDone.Store(c.Now()) },
		ConnectStart:      func(string, string) { p.connStart.Store(c.Now()) },
		ConnectDone:       func(string, string, error) { p.connDone.Store(c.Now()) },
		TLSHandshakeStart: func() { p.tlsStart.Store(c.Now()) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { p.tlsDone.Store(c.Now()) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			p.wrote.Store(c.Now())
			if info.Err == nil && cp != nil {
				cp.arm()
			}
		},
		GotFirstResponseByte: func() { p.firstByte.Store(c.Now()) },
	}
	return p
}

// Do sends p and fills r with everything measured. Identity and schedule
// fields of r (RequestID, TraceRow, session, phase, sender, intended and
// dispatched times, session delay) are the caller's; Do fills the rest. A
// failed request is recorded in r, never returned: Do has no error.
// ctx cancellation (the end of the grace period) records ErrCancelled.
func (s *Sender) Do(ctx context.Context, p *Prepared, r *record.Request) {
	s.do(ctx, p, r)
	if s.e.info.Kind == adapter.KindVideo && p.Err == nil && r.ErrorKind == record.ErrNone {
		s.job(ctx, r) // job.go: poll until done, then download
	}
}

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

// beginBody starts consuming a 2xx response body. An error (the adapter
// refused to open) is recorded in r.
func (s *Sender) beginBody(p *Prepared, r *record.Request, stream bool) error {
	e := s.e
	s.ctxID++
	flags := adapter.OpenFlags(0)
	if stream {
		flags |= adapter.OpenStream
	}
	if e.cfg.Counter != nil || p.Capture || e.cfg.CaptureText {
		flags |= adapter.OpenCaptureText
	}
	if err := s.inst.Open(s.ctxID, flags); err != nil {
		r.EndNS = e.clock.Now()
		s.fail(r, record.ErrAdapter, err.Error())
		return err
	}
	s.stream = stream
	s.parseErr = nil
	s.over = false
	s.bodyBytes = 0
	s.adapterT = 0
	s.whole = s.whole[:0]
	s.evTime = s.evTime[:0]
	s.evBytes = s.evBytes[:0]
	s.evRead = s.evRead[:0]
	s.evKind = s.evKind[:0]
	s.texts, s.evChoice, s.evRowKind, s.xrows = s.texts[:0], s.evChoice[:0], s.evRowKind[:0], s.xrows[:0]
	s.defArena = s.defArena[:0]
	s.defRefs = s.defRefs[:0]
	s.framer.reset()
	return nil
}

// feedBody consumes one read's body bytes, all arrived at t: framed,
// stamped and parsed when streaming, kept whole otherwise. After a parse
// error the rest is not parsed; over a cap nothing more is done (the
// caller stops reading on s.parseErr).
func (s *Sender) feedBody(b []byte, t int64) {
	if s.over {
		return
	}
	if s.bodyBytes += int64(len(b)); s.bodyBytes > s.e.maxBodyBytes {
		s.overCap(capBody)
		return
	}
	if !s.stream {
		s.whole = append(s.whole, b...)
		return
	}
	k := s.frame(b, t)
	if k > 0 && s.parseErr == nil {
		if s.e.info.Deferred {
			s.keepDeferred()
		} else {
			t0 := time.Now()
			s.parseErr = s.parse(len(s.evTime)-k, k, 0)
			s.adapterT += int64(time.Since(t0))
		}
		if s.firstTok != nil {
			s.seeFirstToken(k)
		}
	}
	s.framer.clearCompleted()
}

// endBody finishes a body begun with beginBody: the last event, the whole
// body's parse, the adapter's summary, the timeline and the outcome.
// r.EndNS is the time of the read that saw the end (or readErr).
func (s *Sender) endBody(ctx context.Context, r *record.Request, readErr error) {
	e := s.e
	stream := s.stream
	deferred := e.info.Deferred
	parseErr := s.parseErr
	if stream && readErr == nil && !s.over && s.framer.flush() {
		// A last event without the closing blank line.
		s.stampEvents(1, r.EndNS)
		if parseErr == nil {
			if deferred {
				s.keepDeferred()
			} else {
				parseErr = s.parse(len(s.evTime)-1, 1, adapter.BatchEndOfStream)
			}
		}
		s.framer.clearCompleted()
	}
	if !stream {
		r.LastTokenNS = r.EndNS // provisional: end of body
	}
	t0 := time.Now()
	if !stream && len(s.whole) > 0 && readErr == nil && !s.over {
		s.evTime = append(s.evTime, r.EndNS)
		s.evBytes = append(s.evBytes, int32(len(s.whole)))
		s.evRead = append(s.evRead, 1)
		s.evKind = append(s.evKind, record.EventIgnore)
		s.batch.First = 0
		s.batch.Flags = adapter.BatchWholeBody | adapter.BatchEndOfStream
		s.batch.Events = append(s.batch.Events[:0], adapter.Event{Data: s.whole, Flags: adapter.EventWholeBody})
		s.recs, parseErr = s.inst.Parse(s.ctxID, &s.batch, s.recs[:0])
		s.applyRecords()
	}
	if cap(s.whole) > 1<<20 {
		s.whole = nil // one huge body must not pin its buffer
	}
	if deferred && parseErr == nil && len(s.defRefs) > 0 {
		parseErr = s.parseDeferred()
	}
	closeErr := s.inst.Close(s.ctxID, &s.fin)
	r.AdapterNS += s.adapterT + int64(time.Since(t0))

	countErr := s.finish(ctx, r, stream)
	if e.info.Kind.Media() {
		s.media(r) // job.go
	}
	switch {
	case readErr != nil:
		kind, msg := classify(ctx, readErr)
		s.fail(r, kind, msg)
	case s.over:
		s.fail(r, record.ErrTooLarge, parseErr.Error())
	case parseErr != nil:
		if errors.Is(parseErr, adapter.ErrMalformed) {
			s.fail(r, record.ErrMalformed, parseErr.Error())
		} else {
			s.fail(r, record.ErrAdapter, parseErr.Error())
		}
	case closeErr != nil:
		s.fail(r, record.ErrAdapter, closeErr.Error())
	case s.fin.Valid&adapter.ValidError != 0:
		msg := string(s.fin.ErrorMessage)
		if msg == "" {
			msg = fmt.Sprintf("error event (code %d)", s.fin.ErrorCode)
		}
		s.fail(r, record.ErrStreamError, msg)
	case countErr != nil:
		kind, msg := classify(ctx, countErr)
		s.fail(r, kind, msg)
	case r.ContentEvents == 0:
		s.fail(r, record.ErrNoContent, "the response carried no content")
	}
	if e.cfg.Events {
		s.exportEvents(r)
	}
}

// frame feeds one read to the framer and stamps the events it completed.
// Over a cap (a line or event too long, too many events) it stamps none.
func (s *Sender) frame(p []byte, t int64) int {
	var k int
	switch s.e.info.Framing {
	case adapter.FramingRaw:
		s.framer.push(nil, p, 0)
		k = 1
	case adapter.FramingNDJSON:
		k = s.frameLines(p)
	default:
		k = s.framer.feed(p)
	}
	if s.framer.over || len(s.evTime)+k > s.e.maxEvents {
		if s.framer.over {
			s.overCap(capEvent)
		} else {
			s.overCap(capEvents)
		}
		s.framer.clearCompleted()
		return 0
	}
	s.stampEvents(k, t)
	return k
}

// The caps of one response (Config.MaxResponse…, MaxEventBytes).
const (
	capBody = iota
	capEvent
	capEvents
)

// limitError is a response that went over a cap; the request fails as
// record.ErrTooLarge.
type limitError struct {
	what, flag string
	limit      int64
}

func (e *limitError) Error() string {
	return fmt.Sprintf("response over %d %s (%s): stopped reading and closed the connection", e.limit, e.what, e.flag)
}

// overCap ends the body being read: the response went over cap.
func (s *Sender) overCap(cap int) {
	e := s.e
	var err *limitError
	switch cap {
	case capBody:
		err = &limitError{"body bytes", "--max-response-bytes", e.maxBodyBytes}
	case capEvent:
		err = &limitError{"bytes in one line or event", "--max-event-bytes", int64(e.maxEventBytes)}
	default:
		err = &limitError{"events", "--max-response-events", int64(e.maxEvents)}
	}
	s.over = true
	s.parseErr = err
	s.whole = s.whole[:0]
}

// frameLines frames NDJSON: every complete non-empty line is an event.
// A line over the framer's max stops it (f.over).
func (s *Sender) frameLines(p []byte) int {
	f := &s.framer
	n := 0
	for len(p) > 0 && !f.over {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.carry(p)
			break
		}
		line := p[:i]
		if len(f.line) > 0 {
			if f.carry(line); f.over {
				break
			}
			line = f.line
		} else if len(line) > f.max {
			f.over = true
			break
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) > 0 {
			f.push(nil, line, 0)
			n++
		}
		f.line = f.line[:0]
		p = p[i+1:]
	}
	return n
}

func (s *Sender) stampEvents(k int, t int64) {
	base := len(s.framer.events) - k
	for i := 0; i < k; i++ {
		ref := s.framer.events[base+i]
		s.evTime = append(s.evTime, t)
		s.evBytes = append(s.evBytes, ref.dataLen)
		s.evRead = append(s.evRead, int32(k))
		s.evKind = append(s.evKind, record.EventIgnore)
	}
}

// parse hands the k events just framed (response indexes first…) to the
// adapter.
func (s *Sender) parse(first, k int, flags adapter.BatchFlags) error {
	base := len(s.framer.events) - k
	s.batch.First = uint32(first)
	s.batch.Flags = flags
	s.batch.Events = s.batch.Events[:0]
	for i := 0; i < k; i++ {
		s.batch.Events = append(s.batch.Events, s.framer.event(base+i))
	}
	var err error
	s.recs, err = s.inst.Parse(s.ctxID, &s.batch, s.recs[:0])
	s.applyRecords()
	return err
}

// keepDeferred copies the events just framed into the deferred arena.
func (s *Sender) keepDeferred() {
	f := &s.framer
	for _, ref := range f.events {
		off := int32(len(s.defArena))
		s.defArena = append(s.defArena, f.arena[ref.nameOff:ref.nameOff+ref.nameLen]...)
		s.defArena = append(s.defArena, f.arena[ref.dataOff:ref.dataOff+ref.dataLen]...)
		s.defRefs = append(s.defRefs, frameRef{nameOff: off, nameLen: ref.nameLen, dataOff: off + ref.nameLen, dataLen: ref.dataLen, flags: ref.flags})
	}
}

// parseDeferred parses every stored event after the stream ended.
func (s *Sender) parseDeferred() error {
	max := s.e.info.MaxEventsPerCall
	if max <= 0 {
		max = 256
	}
	for first := 0; first < len(s.defRefs); first += max {
		end := min(first+max, len(s.defRefs))
		s.batch.First = uint32(first)
		s.batch.Flags = 0
		if end == len(s.defRefs) {
			s.batch.Flags = adapter.BatchEndOfStream
		}
		s.batch.Events = s.batch.Events[:0]
		for _, ref := range s.defRefs[first:end] {
			s.batch.Events = append(s.batch.Events, adapter.Event{
				Name:  s.defArena[ref.nameOff : ref.nameOff+ref.nameLen],
				Data:  s.defArena[ref.dataOff : ref.dataOff+ref.dataLen],
				Flags: ref.flags,
			})
		}
		var err error
		s.recs, err = s.inst.Parse(s.ctxID, &s.batch, s.recs[:0])
		s.applyRecords()
		if err != nil {
			return err
		}
	}
	return nil
}

// kindRank orders kinds for the one kind an event is exported with.
var kindRank = [...]uint8{
	record.EventIgnore:    0,
	record.EventMeta:      1,
	record.EventUsage:     2,
	record.EventFinish:    3,
	record.EventError:     4,
	record.EventToolCall:  5,
	record.EventReasoning: 6,
	record.EventContent:   7,
}

// applyRecords folds the adapter's records into the event table.
func (s *Sender) applyRecords() {
	for i := range s.recs {
		rec := &s.recs[i]
		ev := int(rec.Event)
		if ev >= len(s.evKind) || int(rec.Kind) >= len(kindRank) {
			continue // the adapter named an event that does not exist: ignore
		}
		if kindRank[rec.Kind] > kindRank[s.evKind[ev]] {
			s.evKind[ev] = rec.Kind
		}
		s.keepRecord(ev, rec)
	}
}

// finish derives the timeline, token counts and latencies. Its error is
// the end of ctx or of the request's --timeout while counting tokens.
func (s *Sender) finish(ctx context.Context, r *record.Request, stream bool) error {
	s.timeline(r)
	s.serverUsage(r)
	if s.e.info.Kind != adapter.KindGenerate {
		s.finishNonGenerate(r, stream)
		return nil
	}
	osl, countErr := s.outputTokens(ctx, r)
	latencies(r, osl, stream)
	return countErr
}

// timeline sets the event counts and the first event's and the first,
// second, first output and last token's times from the events read.
func (s *Sender) timeline(r *record.Request) {
	r.Events = int32(len(s.evTime))
	for i, t := range s.evTime {
		if s.evRead[i] > r.MaxEventsRead {
			r.MaxEventsRead = s.evRead[i]
		}
		if i == 0 {
			r.FirstEventNS = t
		}
		switch s.evKind[i] {
		case record.EventContent, record.EventReasoning, record.EventToolCall:
			r.ContentEvents++
			switch r.ContentEvents {
			case 1:
				r.FirstTokenNS = t
			case 2:
				r.SecondTokenNS = t
			}
			r.LastTokenNS = t
			if s.evKind[i] != record.EventReasoning && r.FirstOutputTokenNS == 0 {
				r.FirstOutputTokenNS = t
			}
		}
	}
	if r.ContentEvents == 0 {
		r.LastTokenNS = 0
	}
}

// serverUsage copies the token counts the server reported, its finish
// reason and its extras from the adapter's final summary.
func (s *Sender) serverUsage(r *record.Request) {
	f := &s.fin
	if f.Valid&adapter.ValidPromptTokens != 0 {
		r.ServerPromptTokens = int32(f.PromptTokens)
	}
	if f.Valid&adapter.ValidCompletionTokens != 0 {
		r.ServerCompletionTokens = int32(f.CompletionTokens)
	}
	if f.Valid&adapter.ValidReasoningTokens != 0 {
		r.ServerReasoningTokens = int32(f.ReasoningTokens)
	}
	if f.Valid&adapter.ValidCachedTokens != 0 {
		r.ServerCachedTokens = int32(f.CachedTokens)
	}
	r.FinishReason = f.FinishReason.String()
	if len(f.Extras) > 0 {
		r.ServerExtras = string(f.Extras)
	}
}

// finishNonGenerate sets the latencies of an endpoint that generates no
// tokens (embeddings, rankings, media): no output length and no ITL; a
// streamed one has the times to its first and second events.
func (s *Sender) finishNonGenerate(r *record.Request, stream bool) {
	s.evTokens = s.evTokens[:0] // exported event rows: tokens unknown
	r.OutputTokens, r.ReasoningTokens = 0, 0
	r.OutputTokensSource = record.TokensServer
	r.ServerCompletionTokens = -1
	if !stream {
		r.TTFTNS, r.TTFONS, r.TTSTNS, r.ITLNS, r.SecondTokenNS = 0, 0, 0, 0, 0
	} else if r.FirstTokenNS != 0 {
		// A streamed generation endpoint (partial images, audio,
		// transcript deltas): its first and second events, no ITL.
		r.TTFTNS = r.FirstTokenNS - r.SentNS
		if r.FirstOutputTokenNS != 0 {
			r.TTFONS = r.FirstOutputTokenNS - r.SentNS
		}
		if r.SecondTokenNS != 0 {
			r.TTSTNS = r.SecondTokenNS - r.FirstTokenNS
		}
	}
	if r.FirstTokenNS != 0 {
		r.E2ENS = r.LastTokenNS - r.SentNS
		if r.IntendedNS != 0 {
			r.LatencyFromIntendedNS = r.LastTokenNS - r.IntendedNS
		}
	}
}

// outputTokens sets the output lengths: the client tokenizer's count
// over every choice, and the server's usage, which OSL and ITL take when
// it is there (unless told to count on the client). It returns the
// output length ITL divides by, and the error of counting.
func (s *Sender) outputTokens(ctx context.Context, r *record.Request) (osl int64, countErr error) {
	e := s.e
	attributed := false
	r.OutputTokensSource = record.TokensClient
	if e.cfg.Counter != nil {
		r.OutputTokens, r.ReasoningTokens, attributed, countErr = s.countOutput(ctx, &s.fin, e.cfg.Events)
		if r.ServerCompletionTokens >= 0 {
			r.ServerMinusClientOutputTokens = r.ServerCompletionTokens - r.OutputTokens - r.ReasoningTokens
		}
	}
	osl = int64(r.OutputTokens) + int64(r.ReasoningTokens)
	if (e.cfg.UseServerTokenCount || e.cfg.Counter == nil) && r.ServerCompletionTokens >= 0 {
		osl = int64(r.ServerCompletionTokens)
		r.OutputTokensSource = record.TokensServer
		if e.cfg.Counter == nil {
			reasoning := max(r.ServerReasoningTokens, 0)
			r.ReasoningTokens = reasoning
			r.OutputTokens = max(r.ServerCompletionTokens-reasoning, 0)
		}
	}
	if e.cfg.Counter == nil && r.ServerCompletionTokens < 0 {
		// Nothing better than one token per content event.
		r.OutputTokens = r.ContentEvents
		osl = int64(r.ContentEvents)
		r.OutputTokensSource = record.TokensEvents
	}
	if e.cfg.Events {
		s.rowTokens(attributed, r.OutputTokensSource == record.TokensEvents)
	}
	return osl, countErr
}

// latencies derives TTFT, TTFO, TTST, E2E, ITL (over osl tokens) and the
// latency from the intended time from the token times; a response that
// was not streamed has no per-token timeline.
func latencies(r *record.Request, osl int64, stream bool) {
	if r.FirstTokenNS != 0 {
		r.TTFTNS = r.FirstTokenNS - r.SentNS
		if r.FirstOutputTokenNS != 0 {
			r.TTFONS = r.FirstOutputTokenNS - r.SentNS
		}
		if r.SecondTokenNS != 0 {
			r.TTSTNS = r.SecondTokenNS - r.FirstTokenNS
		}
		r.E2ENS = r.LastTokenNS - r.SentNS
		if osl >= 2 {
			r.ITLNS = float64(r.LastTokenNS-r.FirstTokenNS) / float64(osl-1)
		}
		if r.IntendedNS != 0 {
			r.LatencyFromIntendedNS = r.LastTokenNS - r.IntendedNS
		}
	}
	if !stream {
		// Non-streaming: no per-token timeline, latency is the full body.
		r.TTFTNS, r.TTFONS, r.TTSTNS, r.ITLNS = 0, 0, 0, 0
		r.SecondTokenNS = 0
	}
}

// countCheckBytes is the output length from which counting its tokens
// watches the request's --timeout and cancellation: shorter texts are
// counted in well under a millisecond.
const countCheckBytes = 64 << 10

// count counts the tokens of text with the run's counter. A long text is
// counted with ContextCounter under ctx and the request's deadline, so
// neither a timeout nor an interrupt waits for it; the error is then
// ctx's, its cause errTimeout for the deadline. The counter gets text's
// bytes without a copy (TokenCounter must not keep them).
func (s *Sender) count(ctx context.Context, text []byte) (int, error) {
	if len(text) == 0 {
		return 0, nil
	}
	str := unsafe.String(&text[0], len(text))
	cc := s.e.ctxCounter
	if len(text) < countCheckBytes || cc == nil {
		return s.e.cfg.Counter.Count(str), nil
	}
	if !s.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadlineCause(ctx, s.deadline, errTimeout)
		defer cancel()
	}
	n, err := cc.CountContext(ctx, str)
	if err != nil && errors.Is(context.Cause(ctx), errTimeout) {
		err = errCountTimeout
	}
	return n, err
}

var errCountTimeout = fmt.Errorf("request timed out (--timeout) while counting the output's tokens: %w", context.DeadlineExceeded)

// exportEvents appends the rows of r's events: one per event and choice
// (an event of no choice has one row), kinds, choices and tokens as
// finish and rowTokens left them.
func (s *Sender) exportEvents(r *record.Request) {
	x := 0
	for i, t := range s.evTime {
		tok := int32(-1)
		if i < len(s.evTokens) {
			tok = s.evTokens[i]
		}
		s.events = append(s.events, record.Event{
			RequestID: r.RequestID, Seq: int32(i), TimeNS: t, Kind: s.rowKind(i), Choice: s.rowChoice(i),
			Tokens: tok, Bytes: s.evBytes[i], EventsInRead: s.evRead[i],
		})
		for ; x < len(s.xrows) && int(s.xrows[x].ev) <= i; x++ {
			xr := &s.xrows[x]
			if int(xr.ev) < i {
				continue
			}
			s.events = append(s.events, record.Event{
				RequestID: r.RequestID, Seq: int32(i), TimeNS: t, Kind: xr.kind, Choice: xr.choice,
				Tokens: xr.tokens, Bytes: s.evBytes[i], EventsInRead: s.evRead[i],
			})
		}
	}
}

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

// errCancelAfter is the cause of a planned cancellation.
var errCancelAfter = errors.New("planned cancellation (--cancel-rate, --cancel-after)")

// cancelPlan is one request's planned cancellation: a timer armed when
// the request was written whole, stopped when the response ended. arm and
// stop may run on different goroutines (HTTP/2's trace callbacks).
type cancelPlan struct {
	d time.Duration
	// parent is the request's context without the plan: a response that
	// ended before the timer is counted and classified under it.
	parent  context.Context
	cancel  context.CancelCauseFunc
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func newCancelPlan(d time.Duration, parent context.Context) *cancelPlan {
	return &cancelPlan{d: d, parent: parent}
}

// ended stops the timer once the response was read to its end (err ==
// nil) or failed, and returns the context to finish the request under:
// the parent when the response ended first.
func (c *cancelPlan) ended(ctx context.Context, err error) context.Context {
	if c == nil {
		return ctx
	}
	c.stop()
	if err == nil {
		return c.parent
	}
	return ctx
}

// arm starts the timer (once).
func (c *cancelPlan) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped || c.timer != nil {
		return
	}
	c.timer = time.AfterFunc(c.d, func() { c.cancel(errCancelAfter) })
}

// stop stops the timer: the response ended (or the request failed).
func (c *cancelPlan) stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.timer != nil {
		c.timer.Stop()
	}
}

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
