package engine

// Client-side output token counts: every choice of a response, and which
// event each token arrived in. Runs once per response, at its end.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// pieceEncoder is a [TokenCounter] that also says which text each token
// stands for (internal/tokenizer's tokenizers are): with it the engine
// gives every token of a response to the event its last byte arrived in.
// Like a TokenCounter it must not keep the text it is given: the engine
// passes the bytes of its own buffers.
type pieceEncoder interface {
	AppendEncode(dst []int, text string) []int
	Piece(id int) (string, bool)
}

// perChoice reports whether records of kind k are about one choice.
func perChoice(k record.EventKind) bool {
	switch k {
	case record.EventContent, record.EventReasoning, record.EventToolCall, record.EventFinish:
		return true
	}
	return false
}

// keepRecord notes what one adapter record of event ev says for token
// counting (its captured text) and for the exported rows (its choice).
func (s *Sender) keepRecord(ev int, rec *adapter.Record) {
	e := s.e
	if e.cfg.Counter != nil && rec.Flags&adapter.RecordTextCaptured != 0 &&
		(rec.Kind == record.EventReasoning || rec.Kind == record.EventContent && rec.Flags&adapter.RecordRefusal == 0) {
		s.texts = append(s.texts, textRec{ev: int32(ev), choice: rec.Choice, reason: rec.Kind == record.EventReasoning, bytes: rec.TextBytes})
	}
	if !e.cfg.Events {
		return
	}
	for len(s.evChoice) <= ev {
		s.evChoice = append(s.evChoice, -1)
		s.evRowKind = append(s.evRowKind, record.EventIgnore)
	}
	c := int32(rec.Choice)
	switch {
	case !perChoice(rec.Kind) || s.evChoice[ev] < 0 || s.evChoice[ev] == c:
		// The event's first row: its first choice, and what belongs to
		// no choice (usage, errors, role chunks, comments).
		if perChoice(rec.Kind) {
			s.evChoice[ev] = c
		}
		if kindRank[rec.Kind] > kindRank[s.evRowKind[ev]] {
			s.evRowKind[ev] = rec.Kind
		}
	default:
		for j := len(s.xrows) - 1; j >= 0 && s.xrows[j].ev == int32(ev); j-- {
			if x := &s.xrows[j]; x.choice == c {
				if kindRank[rec.Kind] > kindRank[x.kind] {
					x.kind = rec.Kind
				}
				return
			}
		}
		s.xrows = append(s.xrows, xrow{ev: int32(ev), choice: c, kind: rec.Kind, tokens: -1})
	}
}

// maxAttributeBytes bounds the text of one choice whose tokens are given
// to events: encoding is not interruptible, so longer texts are only
// counted (under the request's deadline, see Sender.count) and the
// response's event rows have no token counts.
const maxAttributeBytes = 1 << 20

// countOutput counts the content and reasoning tokens of every choice with
// the client tokenizer: choice 0 from fin.Text and fin.Reasoning, the
// others from fin.Other, one choice at a time (a choice's text is not
// joined to another's). With attribute it also gives each token to the
// text record holding its last byte (textRec.tokens), and reports whether
// it could (the counter must be a pieceEncoder, and no choice's text may
// be over maxAttributeBytes). Its error is Sender.count's.
func (s *Sender) countOutput(ctx context.Context, fin *adapter.Final, attribute bool) (content, reasoning int32, attributed bool, err error) {
	enc, _ := s.e.cfg.Counter.(pieceEncoder)
	attributed = attribute && enc != nil
	// Where each record's text is: its source buffer in record order.
	var offText, offReason, offOther uint32
	others := false
	for i := range s.texts {
		t := &s.texts[i]
		t.tokens = 0
		switch {
		case t.choice != 0:
			t.off, offOther = offOther, offOther+t.bytes
			others = true
		case t.reason:
			t.off, offReason = offReason, offReason+t.bytes
		default:
			t.off, offText = offText, offText+t.bytes
		}
	}
	// count counts one choice's text (content or reasoning), recs being
	// its text records in order.
	count := func(text []byte, recs []int32) (int32, error) {
		if attributed && len(text) <= maxAttributeBytes {
			return s.attribute(enc, text, recs), nil
		}
		attributed = false
		n, err := s.count(ctx, text)
		return int32(min(n, math.MaxInt32)), err
	}
	for _, reason := range []bool{false, true} {
		s.order = s.order[:0]
		for i := range s.texts {
			if t := &s.texts[i]; t.choice == 0 && t.reason == reason {
				s.order = append(s.order, int32(i))
			}
		}
		text := fin.Text
		if reason {
			text = fin.Reasoning
		}
		n, err := count(text, s.order)
		if err != nil {
			return content, reasoning, false, err
		}
		if reason {
			reasoning = n
		} else {
			content = n
		}
	}
	if !others {
		return content, reasoning, attributed, nil
	}
	// The other choices: their records sorted by (choice, kind), stable,
	// so each group's text is its records' slices of Other in turn.
	s.order = s.order[:0]
	for i := range s.texts {
		if s.texts[i].choice != 0 {
			s.order = append(s.order, int32(i))
		}
	}
	slices.SortStableFunc(s.order, func(a, b int32) int {
		ta, tb := &s.texts[a], &s.texts[b]
		if ta.choice != tb.choice {
			return int(ta.choice) - int(tb.choice)
		}
		if ta.reason == tb.reason {
			return 0
		}
		if tb.reason {
			return -1
		}
		return 1
	})
	groups := s.order
	for start := 0; start < len(groups); {
		first := &s.texts[groups[start]]
		end := start + 1
		for end < len(groups) && s.texts[groups[end]].choice == first.choice && s.texts[groups[end]].reason == first.reason {
			end++
		}
		s.seg = s.seg[:0]
		for _, i := range groups[start:end] {
			t := &s.texts[i]
			lo := min(int(t.off), len(fin.Other))
			hi := min(int(t.off)+int(t.bytes), len(fin.Other))
			s.seg = append(s.seg, fin.Other[lo:hi]...)
		}
		n, err := count(s.seg, groups[start:end])
		if err != nil {
			return content, reasoning, false, err
		}
		if first.reason {
			reasoning = satAdd(reasoning, n)
		} else {
			content = satAdd(content, n)
		}
		start = end
	}
	return content, reasoning, attributed, nil
}

// satAdd adds two non-negative counts, saturating at math.MaxInt32.
func satAdd(a, b int32) int32 {
	return int32(min(int64(a)+int64(b), math.MaxInt32))
}

// attribute encodes text and gives each token to the record, of recs (in
// order, their texts consecutive from the start of text), holding the
// token's last byte. Token pieces are measured in bytes; when they do not
// add up to the text (a tokenizer that normalizes, such as SentencePiece's
// leading space), positions are scaled to it. It returns the token count.
func (s *Sender) attribute(enc pieceEncoder, text []byte, recs []int32) int32 {
	str := ""
	if len(text) > 0 {
		str = unsafe.String(&text[0], len(text)) // the encoder keeps nothing (pieceEncoder)
	}
	s.ids = enc.AppendEncode(s.ids[:0], str)
	if len(recs) == 0 {
		return int32(len(s.ids))
	}
	total := 0
	for _, id := range s.ids {
		p, _ := enc.Piece(id)
		total += len(p)
	}
	r := 0
	recEnd := int(s.texts[recs[0]].bytes)
	end := 0
	for _, id := range s.ids {
		p, _ := enc.Piece(id)
		end += len(p)
		last := end - 1
		if total != len(text) && total > 0 {
			last = int(int64(last) * int64(len(text)) / int64(total))
		}
		for last >= recEnd && r < len(recs)-1 {
			r++
			recEnd += int(s.texts[recs[r]].bytes)
		}
		s.texts[recs[r]].tokens++
	}
	return int32(len(s.ids))
}

// rowTokens fills the tokens of the exported rows of the current response
// (evTokens for each event's first row, xrows for the others) from what
// the client counted: the tokens countOutput attributed, or with
// onePerEvent (no tokenizer, no usage) one per content event.
func (s *Sender) rowTokens(attributed, onePerEvent bool) {
	n := len(s.evTime)
	s.evTokens = s.evTokens[:0]
	switch {
	case attributed:
		for i := 0; i < n; i++ {
			tok := int32(0)
			if s.rowKind(i) == record.EventToolCall {
				tok = -1 // tool-call arguments are not counted
			}
			s.evTokens = append(s.evTokens, tok)
		}
		for j := range s.xrows {
			if s.xrows[j].kind == record.EventToolCall {
				s.xrows[j].tokens = -1
			} else {
				s.xrows[j].tokens = 0
			}
		}
		x := 0
		for i := range s.texts {
			t := &s.texts[i]
			if int(t.ev) >= n {
				continue
			}
			if int(t.ev) >= len(s.evChoice) || s.evChoice[t.ev] == int32(t.choice) {
				s.evTokens[t.ev] = max(s.evTokens[t.ev], 0) + t.tokens
				continue
			}
			for x < len(s.xrows) && s.xrows[x].ev < t.ev {
				x++
			}
			for j := x; j < len(s.xrows) && s.xrows[j].ev == t.ev; j++ {
				if s.xrows[j].choice == int32(t.choice) {
					s.xrows[j].tokens = max(s.xrows[j].tokens, 0) + t.tokens
					break
				}
			}
		}
	case onePerEvent:
		// No tokenizer and no usage: one token per content event.
		for i := 0; i < n; i++ {
			tok := int32(0)
			switch s.evKind[i] {
			case record.EventContent, record.EventReasoning, record.EventToolCall:
				tok = 1
			}
			s.evTokens = append(s.evTokens, tok)
		}
	default:
		for i := 0; i < n; i++ {
			s.evTokens = append(s.evTokens, -1)
		}
	}
}

// rowKind is the kind of event i's first row.
func (s *Sender) rowKind(i int) record.EventKind {
	if i < len(s.evRowKind) {
		return s.evRowKind[i]
	}
	return s.evKind[i]
}

// rowChoice is the choice of event i's first row (-1 for none).
func (s *Sender) rowChoice(i int) int32 {
	if i < len(s.evChoice) {
		return s.evChoice[i]
	}
	return -1
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
