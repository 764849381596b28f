package engine

// Hot path: consuming a 2xx response's body as it arrives (beginBody,
// feedBody, endBody): framing, stamping and parsing its events, then
// finishing the request's record. Allocation budget: TestSSEAllocs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

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
		s.media(r)
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

// media copies the adapter's media counts of the response just read into r.
func (s *Sender) media(r *record.Request) {
	m := &s.fin.Media
	r.MediaItems, r.MediaPartials, r.MediaBytes, r.AudioNS = m.Items, m.Partials, m.Bytes, m.AudioNS
	if s.e.info.Kind == adapter.KindTranscription && r.InputAudioNS > 0 {
		// The clip uploaded was the trace row's own, counted at build as
		// the request's input audio; the adapter reports the run's clip.
		r.AudioNS = r.InputAudioNS
	}
	if i := int(m.FirstEvent) - 1; i >= 0 && i < len(s.evTime) && r.SentNS != 0 {
		r.FirstMediaNS = s.evTime[i] - r.SentNS
	}
}
