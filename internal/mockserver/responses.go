// Hot path: the token loop of a streamed Responses API answer; its
// allocation budget is TestStreamAllocs' responses case.

package mockserver

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// The Responses API stream (as vLLM writes it, docs/format/mock-server.md):
// response.created and response.in_progress when the request is admitted,
// then per output item (a reasoning item when the server reasons, then the
// message) output_item.added, the deltas, the done events carrying the
// whole text, output_item.done; last response.completed, or
// response.incomplete when max_output_tokens ended it, with the usage.
// Every event is "event: TYPE\ndata: {...}\n\n" and there is no [DONE].

// respStream writes the numbered events of one streamed Responses answer
// into st.buf and emits each; the emit methods return false when the
// answer ended (the client went away, a write failed). It holds no
// pointer into the request's runInfo: the escape analysis would move the
// caller's request to the heap.
type respStream struct {
	s   *Server
	st  *reqState
	ch  choiceText // the answer's reasoning and content tokens, finish reason
	seq int        // the next event's sequence_number
}

// emit numbers and emits the event in st.buf, of kind.
func (e *respStream) emit(kind EventKind) bool {
	e.seq++
	return e.s.emit(e.st, &e.st.hs, kind, 0)
}

// env emits an envelope event of typ carrying run's response object: in
// progress, or final (with the output items and the usage).
func (e *respStream) env(run *runInfo, typ string, final bool) bool {
	st := e.st
	st.buf = respEvent(st.buf[:0], typ, e.seq)
	st.buf = append(st.buf, `,"response":`...)
	st.buf = st.rd.respObject(st.buf, run.model, run.created, e.ch, final)
	st.buf = append(st.buf, "}\n\n"...)
	if final {
		return e.emit(EventUsage)
	}
	return e.emit(EventEnvelope)
}

// item emits an output_item event of typ for the item at index (see
// renderer.respItem for reasoning, from, to and done).
func (e *respStream) item(typ string, index int, reasoning bool, from, to int, done bool) bool {
	st := e.st
	st.buf = respEvent(st.buf[:0], typ, e.seq)
	st.buf = append(st.buf, `,"output_index":`...)
	st.buf = strconv.AppendInt(st.buf, int64(index), 10)
	st.buf = append(st.buf, `,"item":`...)
	st.buf = st.rd.respItem(st.buf, reasoning, from, to, done)
	st.buf = append(st.buf, "}\n\n"...)
	return e.emit(EventEnvelope)
}

// Modes of respStream.part.
const (
	partAdded    = iota // an empty part added
	partTextDone        // a text done event with the text of tokens [from, to)
	partDone            // a part done, with that text
)

// part emits a content part event of typ of the reasoning item or the
// message, in mode.
func (e *respStream) part(typ string, reasoning bool, from, to int, mode int) bool {
	st := e.st
	st.buf = respEvent(st.buf[:0], typ, e.seq)
	st.buf = append(st.buf, `,"item_id":"`...)
	st.buf = st.rd.itemID(st.buf, reasoning)
	st.buf = append(st.buf, `","output_index":`...)
	idx := st.rd.msgIndex
	if reasoning {
		idx = 0
	}
	st.buf = strconv.AppendInt(st.buf, int64(idx), 10)
	st.buf = append(st.buf, `,"content_index":0`...)
	switch {
	case mode == partTextDone:
		st.buf = append(st.buf, `,"text":"`...)
		st.buf = appendFiller(st.buf, 0, from, to)
		st.buf = append(st.buf, '"')
	case mode == partDone:
		st.buf = append(st.buf, `,"part":{"type":"output_text","text":"`...)
		st.buf = appendFiller(st.buf, 0, from, to)
		st.buf = append(st.buf, `","annotations":[]}`...)
	case reasoning:
		st.buf = append(st.buf, `,"part":{"type":"reasoning_text","text":""}`...)
	default:
		st.buf = append(st.buf, `,"part":{"type":"output_text","text":"","annotations":[]}`...)
	}
	st.buf = append(st.buf, "}\n\n"...)
	return e.emit(EventEnvelope)
}

// openMessage closes the reasoning item of the first R tokens (when
// closeReasoning) and opens the message item with its content part.
func (e *respStream) openMessage(R int, closeReasoning bool) bool {
	if closeReasoning && (!e.part("response.reasoning_text.done", true, 0, R, partTextDone) ||
		!e.item("response.output_item.done", 0, true, 0, R, true)) {
		return false
	}
	return e.item("response.output_item.added", e.st.rd.msgIndex, false, 0, 0, false) &&
		e.part("response.content_part.added", false, 0, 0, partAdded)
}

// closeMessage closes the message item of tokens [R, total).
func (e *respStream) closeMessage(R, total int) bool {
	return e.part("response.output_text.done", false, R, total, partTextDone) &&
		e.part("response.content_part.done", false, R, total, partDone) &&
		e.item("response.output_item.done", e.st.rd.msgIndex, false, R, total, true)
}

// token emits the delta of token k (reasoning for the first R), opening
// the items around it, and records its write.
func (e *respStream) token(k, R int, off time.Duration) bool {
	st := e.st
	reasoning := k < R
	if k == 0 && reasoning && !e.item("response.output_item.added", 0, true, 0, 0, false) {
		return false
	}
	if k == R && !e.openMessage(R, R > 0) {
		return false
	}
	st.buf = st.rd.respDelta(st.buf[:0], e.seq, k, reasoning)
	kind := EventContent
	if reasoning {
		kind = EventReasoning
		st.log.ReasoningTokens++
	}
	if !e.emit(kind) {
		return false
	}
	e.s.tokenWritten(st, k, off)
	return true
}

// streamResponses writes a streamed Responses answer and returns its
// finish reason ("" when it did not finish). Faults strike as in stream:
// after half the tokens (stall, malformed event, error event, reset).
func (s *Server) streamResponses(ctx context.Context, st *reqState, run *runInfo) string {
	sk := &st.hs
	s.setHeaders(st.hs.w.Header(), true)
	lg := &st.log
	lg.Status = http.StatusOK
	rd := &st.rd
	total := st.lens[0]
	R := min(s.cfg.ReasoningTokens, total)
	rd.msgIndex = 0
	if R > 0 {
		rd.msgIndex = 1
	}
	finish := st.finish[0]
	e := respStream{s: s, st: st, ch: choiceText{reasoning: R, content: total - R, finish: finish}}
	// Admitted: the envelopes go out before prefill ends.
	st.due = run.admitted
	if !e.env(run, "response.created", false) || !e.env(run, "response.in_progress", false) || !s.flushPending(st, sk) {
		return ""
	}
	faultAt := st.faults.strikeAt(total)
	off := run.first
	decodeStart := off
	for k := range total {
		if !s.nextToken(ctx, st, sk, run, k, &off) || !e.token(k, R, off) {
			return ""
		}
		if k == faultAt && !s.midStreamFault(ctx, st, sk, run, &off, k == total-1, e.seq) {
			return ""
		}
	}
	s.met.decodeNS.Add(int64(off - decodeStart))
	if R == total && !e.openMessage(R, true) { // all reasoning: an empty message
		return ""
	}
	if !e.closeMessage(R, total) {
		return ""
	}
	rd.setUsage(run.prompt, run.cached, run.total, run.reasoning, ms(run.first), ms(off-decodeStart))
	typ := "response.completed"
	if finish == "length" {
		typ = "response.incomplete"
	}
	if !e.env(run, typ, true) || !s.flushPending(st, sk) {
		return ""
	}
	lg.FinishReason = finish
	return finish
}
