package engine

import "github.com/reprise-bench/reprise/engine/record"

// NotifyFirstToken makes the sender's next Do call n.FirstToken when the
// response's first content, reasoning or tool-call event has been read
// (for an adapter that parses after the stream, the first event), on
// the goroutine calling Do. It is reset when Do returns. A non-streamed
// response, or one that fails before a token, does not call it.
func (s *Sender) NotifyFirstToken(n FirstTokenNotifier) { s.firstTok = n }

// seeFirstToken calls the first-token notifier once the events framed
// so far (k just now, of which the adapter has parsed those it parses
// live) hold a token.
func (s *Sender) seeFirstToken(k int) {
	if s.e.info.Deferred {
		s.fireFirstToken() // parsed after the stream: the first event stands for it
		return
	}
	for _, kind := range s.evKind[len(s.evKind)-k:] {
		switch kind {
		case record.EventContent, record.EventReasoning, record.EventToolCall:
			s.fireFirstToken()
			return
		}
	}
}

func (s *Sender) fireFirstToken() {
	n := s.firstTok
	s.firstTok = nil
	n.FirstToken()
}
