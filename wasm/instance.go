// Hot path: Instance.Parse and Instance.Build; allocation budget in
// TestParseAllocs.

package wasm

import (
	"fmt"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// Release implements adapter.Instance: it returns the module the instance
// holds, if any, to the adapter's pool. Contexts still open are lost.
func (in *Instance) Release() error {
	if in.m != nil && in.held > 0 {
		in.m.dead = true // the guest still keeps their state
	}
	in.held = 0
	for ctx, s := range in.open {
		delete(in.open, ctx)
		in.free = append(in.free, s)
	}
	in.unlease()
	return nil
}

// Spent returns the total time this instance has spent in guest calls.
// Callers take differences to measure one request.
func (in *Instance) Spent() time.Duration { return in.spent }

var _ adapter.Instance = (*Instance)(nil)

// fail returns a per-request error that touched no module.
func (in *Instance) fail(call, format string, args ...any) error {
	return &AdapterError{Adapter: in.a.desc.Name, Call: call, Msg: fmt.Sprintf(format, args...)}
}

// lease returns the module the instance holds, taking one from the pool
// (and waiting for one) when it holds none.
func (in *Instance) lease() (*module, error) {
	if in.m != nil {
		return in.m, nil
	}
	m, err := in.a.acquire(in.conf, in.seed)
	if err != nil {
		return nil, err
	}
	m.owner = in
	in.m = m
	return m, nil
}

// unlease returns the module to the pool when no context holds it.
func (in *Instance) unlease() {
	if in.m == nil || in.held > 0 {
		return
	}
	m := in.m
	in.m, m.owner = nil, nil
	in.a.release(m)
}

// Build implements adapter.Instance (rp_build). Call it ahead of the send
// time; out is reset first.
func (in *Instance) Build(req *adapter.BuildInput, out *adapter.HTTPRequest) error {
	if !in.a.desc.Builds {
		return in.fail("rp_build", "adapter %s does not build requests", in.a.desc.Name)
	}
	m, err := in.lease()
	if err != nil {
		return err
	}
	defer in.unlease()
	return m.build(req, out)
}

// Open implements adapter.Instance. The guest's rp_open runs when the
// context's first events (or its Close) reach the guest; its failure is
// returned there. random_u64 is reseeded from the run seed and ctx.
func (in *Instance) Open(ctx uint32, flags adapter.OpenFlags) error {
	if !in.a.desc.Parses {
		return in.fail("rp_open", "adapter %s does not parse responses", in.a.desc.Name)
	}
	if s, ok := in.open[ctx]; ok {
		if !s.lost() {
			return in.fail("rp_open", "context %d already open", ctx)
		}
		in.end(ctx, s) // a context lost with its module: open it anew
	}
	s := in.freeStream()
	s.flags, s.capture = flags, flags&adapter.OpenCaptureText != 0
	in.open[ctx] = s
	return nil
}

func (in *Instance) freeStream() *stream {
	if n := len(in.free); n > 0 {
		s := in.free[n-1]
		in.free = in.free[:n-1]
		*s = stream{text: s.text[:0], reasoning: s.reasoning[:0], other: s.other[:0]}
		return s
	}
	return &stream{}
}

// lost reports whether the module the context was opened on was replaced.
func (s *stream) lost() bool {
	return s.m != nil && (s.gen != s.m.gen || s.m.dead)
}

// end forgets context ctx and returns the module when no context holds
// it any more.
func (in *Instance) end(ctx uint32, s *stream) {
	delete(in.open, ctx)
	in.free = append(in.free, s)
	if s.m != nil {
		in.held--
	}
	in.unlease()
}

// stream returns the open context ctx, sending rp_open to a module first
// if it has not reached one yet.
func (in *Instance) stream(name string, ctx uint32) (*stream, error) {
	s, ok := in.open[ctx]
	switch {
	case !ok:
		return nil, in.fail(name, "context %d is not open", ctx)
	case s.openErr != nil:
		return nil, s.openErr
	case s.m == nil:
		m, err := in.lease()
		if err != nil {
			s.openErr = err
			return nil, err
		}
		if err := in.openOn(m, ctx, s); err != nil {
			s.openErr = err
			in.unlease()
			return nil, err
		}
		in.held++
		s.m, s.gen = m, m.gen
	case s.lost():
		return nil, in.fail(name, "context %d was lost when the instance was replaced after an earlier failure", ctx)
	}
	return s, nil
}

// openOn sends rp_open for ctx to m.
func (in *Instance) openOn(m *module, ctx uint32, s *stream) error {
	if err := m.revive(); err != nil {
		return err
	}
	m.rng = in.seed ^ uint64(ctx)*0x9e3779b97f4a7c15
	st, v, err := m.call("rp_open", m.fn.open, ctx, uint32(s.flags))
	if err != nil {
		return err
	}
	if st != statusOK {
		return m.statusError("rp_open", st, v)
	}
	return nil
}

// Parse implements adapter.Instance (rp_parse). Batches larger than the
// module's max_events_per_call are split.
func (in *Instance) Parse(ctx uint32, batch *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	s, err := in.stream("rp_parse", ctx)
	if err != nil {
		return dst, err
	}
	m := s.m
	events, first := batch.Events, batch.First
	for len(events) > 0 {
		n := min(len(events), in.a.desc.MaxEventsPerCall)
		// Keep the encoded batch within the buffer limit; a single event
		// larger than that fails in ensureIn.
		size := batchHeaderSize
		for i := 0; i < n; i++ {
			es := eventSize(&events[i])
			if i > 0 && size+es > maxBuffer/2 {
				n = i
				break
			}
			size += es
		}
		flags := batch.Flags
		if n < len(events) {
			flags &^= adapter.BatchEndOfStream
		}
		dst, err = m.parseBatch(ctx, s, first, events[:n], flags, dst)
		if err != nil {
			return dst, err
		}
		events = events[n:]
		first += uint32(n)
	}
	return dst, nil
}

// Close implements adapter.Instance (rp_close). It must be called once for
// every successful Open, even after errors. fin's slices are valid until
// the next Open.
func (in *Instance) Close(ctx uint32, fin *adapter.Final) error {
	fin.Reset()
	s, err := in.stream("rp_close", ctx)
	if s0, ok := in.open[ctx]; ok {
		defer in.end(ctx, s0)
	}
	if err != nil {
		return err
	}
	return s.m.closeContext(ctx, s, fin)
}
