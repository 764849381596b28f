package engine

// The Sender's API: made by the engine, Do sends one request (request.go)
// and follows a video endpoint's job (job.go); Events and Response give
// what it read. Its state is in state.go.

import (
	"context"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

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
