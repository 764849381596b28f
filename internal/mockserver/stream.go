// Hot path: the token loop of every response; allocation budget in
// TestStreamAllocs, throughput in BenchmarkSSE and BenchmarkNonStream.

package mockserver

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// stream writes a streamed response and returns choice 0's finish reason
// ("" when it did not finish).
func (s *Server) stream(ctx context.Context, st *reqState, run *runInfo) string {
	var sk sink = &st.hs
	if run.llama && !st.h2 {
		sk = &st.raw
		defer st.raw.abort()
	} else {
		s.setHeaders(st.hs.w.Header(), true)
	}
	lg := &st.log
	lg.Status = http.StatusOK
	n := len(st.lens)
	maxLen := 0
	for _, l := range st.lens {
		maxLen = max(maxLen, l)
	}
	faultAt := st.faults.strikeAt(st.lens[0]) // the step after which a mid-stream fault strikes
	R := s.cfg.ReasoningTokens
	rd := &st.rd
	off := run.first
	decodeStart := off
	emitted := 0
	for k := range maxLen {
		if !s.nextToken(ctx, st, sk, run, k, &off) {
			return ""
		}
		if k == 0 && run.chat {
			for c := range n {
				st.buf = rd.role(st.buf[:0], c)
				if !s.emit(st, sk, EventRole, c) {
					return ""
				}
			}
		}
		for c := range n {
			if k >= st.lens[c] {
				continue
			}
			kind := EventContent
			if k < R {
				kind = EventReasoning
			}
			st.buf = rd.token(st.buf[:0], c, rd.word(k, c), k < R)
			if !s.emit(st, sk, kind, c) {
				return ""
			}
			emitted++
			lg.OutputTokens = emitted
			if k < R {
				lg.ReasoningTokens++
			}
			if k > 0 {
				s.met.itl.observe(off - prevOff(st, c))
			}
			st.setPrev(c, off)
			if k == st.lens[c]-1 {
				if run.llama {
					rd.setUsage(run.prompt, run.cached, run.total, run.reasoning, ms(run.first), ms(off-decodeStart))
				}
				withUsage := run.llama && !run.chat && run.req.includeUsage
				withTimings := run.llama && !run.req.includeUsage
				st.buf = rd.finish(st.buf[:0], c, st.finish[c], withUsage, withTimings)
				if !s.emit(st, sk, EventFinish, c) {
					return ""
				}
			}
		}
		s.met.generationTokens.Add(int64(activeAt(st.lens, k)))
		if k == faultAt && !s.midStreamFault(ctx, st, sk, run, &off, k == maxLen-1, 0) {
			return ""
		}
	}
	s.met.decodeNS.Add(int64(off - decodeStart))
	lg.FinishReason = st.finish[0]
	if run.req.includeUsage && (run.chat || !run.llama) {
		rd.setUsage(run.prompt, run.cached, run.total, run.reasoning, ms(run.first), ms(off-decodeStart))
		st.buf = rd.usageChunk(st.buf[:0])
		if !s.emit(st, sk, EventUsage, 0) {
			return ""
		}
	}
	st.buf = appendDone(st.buf[:0])
	if !s.emit(st, sk, EventDone, 0) || !s.flushPending(st, sk) {
		return ""
	}
	if run.llama {
		st.raw.end()
	}
	return st.finish[0]
}

// emit writes the event rendered in st.buf and records it. With
// Config.Coalesce it only queues the event; flushPending writes the queue.
func (s *Server) emit(st *reqState, sk sink, kind EventKind, choice int) bool {
	if d := s.cfg.CPUPerToken; d > 0 && (kind == EventContent || kind == EventReasoning) {
		spin(d)
	}
	if !s.cfg.Coalesce {
		st.writeStart = s.mono()
		return s.event(st, kind, choice, sk.write(st.buf))
	}
	st.pending = append(st.pending, st.buf...)
	if s.oracle.enabled() {
		if len(st.pending) == len(st.buf) { // first of a batch
			st.stamped = len(st.log.Events)
		}
		var due int64
		if st.due != 0 {
			due = s.wall(st.due)
		}
		st.log.Events = append(st.log.Events, Event{Kind: kind, Choice: int32(choice), DueNS: due})
	}
	return true
}

// nextToken advances off to token k's offset from admission (the first at
// run.first, each later one an inter-token latency after the one before,
// at the running count of now), writes the events due before it, and
// sleeps until it; false when the request must stop. Events due at the
// same instant stay pending, so they are written together (Coalesce).
func (s *Server) nextToken(ctx context.Context, st *reqState, sk sink, run *runInfo, k int, off *time.Duration) bool {
	if k > 0 {
		*off += s.timing.interToken(int(s.running.Load()), st.rng)
	}
	due := run.admitted + int64(*off)
	if due != st.due && !s.flushPending(st, sk) {
		return false
	}
	st.due = due
	return s.sleepUntil(ctx, st, st.due)
}

// stallMidStream is where a mid-stream fault strikes: it writes what is
// due and, with a stall fault, moves off to d after the write that
// actually happened, so the client sees a gap of at least d (after the
// last token it sleeps through the stall itself); false when the request
// must stop.
func (s *Server) stallMidStream(ctx context.Context, st *reqState, sk sink, run *runInfo, off *time.Duration, last bool) bool {
	if !s.flushPending(st, sk) {
		return false
	}
	if d := st.faults.stall; d > 0 {
		*off = max(*off, time.Duration(s.mono()-run.admitted)) + d
		if last {
			st.due = run.admitted + int64(*off)
			return s.sleepUntil(ctx, st, st.due)
		}
	}
	return true
}

// midStreamFault strikes the mid-stream fault planned for this request
// after the current token (last: it was the final one): the stall, a
// malformed event, then an error event or a connection reset, each in the
// API's own form (renderer.malformed, renderer.errorEvent; seq numbers a
// Responses event). It reports whether the answer goes on.
func (s *Server) midStreamFault(ctx context.Context, st *reqState, sk sink, run *runInfo, off *time.Duration, last bool, seq int) bool {
	if !s.stallMidStream(ctx, st, sk, run, off, last) {
		return false
	}
	rd := &st.rd
	if st.faults.malformed {
		st.buf = rd.malformed(st.buf[:0])
		if !s.emit(st, sk, EventMalformed, 0) {
			return false
		}
	}
	if st.faults.errorEvent {
		st.log.Error = "injected error event"
		st.buf = rd.errorEvent(st.buf[:0], seq)
		if !s.emit(st, sk, EventError, 0) {
			return false
		}
		if rd.endsErrorWithDone() {
			st.buf = appendDone(st.buf[:0])
			s.emit(st, sk, EventDone, 0)
		}
		s.flushPending(st, sk)
		st.raw.end() // a llama.cpp stream's own connection; no-op for the others
		return false
	}
	if st.faults.resetMid {
		st.log.Error = "injected reset"
		sk.reset()
		s.event(st, EventReset, 0, nil)
		return false
	}
	return true
}

// flushPending writes the queued events in one write and stamps them all
// with its time.
func (s *Server) flushPending(st *reqState, sk sink) bool {
	if len(st.pending) == 0 {
		return true
	}
	start := s.mono()
	err := sk.write(st.pending)
	st.pending = st.pending[:0]
	t := s.mono()
	st.log.EndNS = s.wall(t)
	for i := st.stamped; i < len(st.log.Events); i++ {
		st.log.Events[i].StartNS, st.log.Events[i].TimeNS = s.wall(start), s.wall(t)
	}
	st.stamped = len(st.log.Events)
	if err != nil {
		st.log.Error = "write: " + err.Error()
		return false
	}
	return true
}

// activeAt counts the choices still generating at step k.
func activeAt(lens []int, k int) int {
	n := 0
	for _, l := range lens {
		if k < l {
			n++
		}
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// prevOff returns the schedule offset of choice c's previous token.
// tokenWritten records that token k (0-based) of a one-choice stream
// was written at off from admission: the log's output count, the ITL
// histogram and the generation counter.
func (s *Server) tokenWritten(st *reqState, k int, off time.Duration) {
	st.log.OutputTokens = k + 1
	if k > 0 {
		s.met.itl.observe(off - prevOff(st, 0))
	}
	st.setPrev(0, off)
	s.met.generationTokens.Add(1)
}

func prevOff(st *reqState, c int) time.Duration {
	if c < len(st.prev) {
		return st.prev[c]
	}
	return 0
}

func (st *reqState) setPrev(c int, off time.Duration) {
	for len(st.prev) <= c {
		st.prev = append(st.prev, 0)
	}
	st.prev[c] = off
}

// nonStream writes a non-streamed response at the time its last token is
// due and returns choice 0's finish reason ("" when it did not finish).
func (s *Server) nonStream(ctx context.Context, st *reqState, run *runInfo) string {
	lg := &st.log
	maxLen := 0
	for _, l := range st.lens {
		maxLen = max(maxLen, l)
	}
	running := int(s.running.Load())
	off := run.first
	for k := 1; k < maxLen; k++ {
		itl := s.timing.interToken(running, st.rng)
		off += itl
		s.met.itl.observe(itl)
	}
	decode := off - run.first
	off += st.faults.stall
	st.due = run.admitted + int64(off)
	if !s.sleepUntil(ctx, st, st.due) {
		return ""
	}
	w := st.hs.w
	if st.faults.resetMid {
		lg.Error = "injected reset"
		st.hs.reset()
		s.event(st, EventReset, 0, nil)
		return ""
	}
	if st.faults.errorEvent {
		s.writeError(st, w, 500, injectedError, "")
		return ""
	}
	s.met.generationTokens.Add(int64(run.total))
	s.met.decodeNS.Add(int64(decode))
	lg.OutputTokens, lg.ReasoningTokens = run.total, run.reasoning
	st.rd.setUsage(run.prompt, run.cached, run.total, run.reasoning, ms(run.first), ms(decode))
	choices := st.choices[:0]
	for c, l := range st.lens {
		r := min(s.cfg.ReasoningTokens, l)
		choices = append(choices, choiceText{reasoning: r, content: l - r, finish: st.finish[c]})
	}
	st.choices = choices
	st.buf = st.rd.body(st.buf[:0], run.model, run.created, choices)
	if st.faults.malformed {
		st.buf = st.buf[:len(st.buf)/2]
	}
	h := w.Header()
	if !st.headersSent {
		s.setHeaders(h, false)
		h["Content-Length"] = []string{strconv.Itoa(len(st.buf))}
	}
	lg.Status = http.StatusOK
	st.writeStart = s.mono()
	_, err := w.Write(st.buf)
	if err == nil {
		err = st.hs.flush()
	}
	kind := EventBody
	if st.faults.malformed {
		kind = EventMalformed
	}
	if !s.event(st, kind, 0, err) {
		return ""
	}
	lg.FinishReason = st.finish[0]
	return st.finish[0]
}

// spin keeps the CPU busy for d of wall time (Config.CPUPerToken).
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
