// Hot path: Instance.Parse and Instance.Build; allocation budget in
// TestParseAllocs.

package wasm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// Instance is one instantiated adapter owned by one worker goroutine. It is
// not safe for concurrent use. After a trap or a deadline it replaces its
// module transparently on the next call; contexts opened on the old module
// then fail with an [*AdapterError].
type Instance struct {
	a           *Adapter
	adapterName string
	mod         api.Module
	mem         api.Memory
	fn          exports
	stack       []uint64

	ctx      context.Context
	cancelMu sync.Mutex // guards cancel against the watchdog
	cancel   context.CancelFunc
	// callStart is the start of the running call (ns since epoch), 0 when
	// idle; read by the watchdog.
	callStart atomic.Int64
	timedOut  atomic.Bool
	watched   bool

	inPtr, inCap   uint32
	outPtr, outCap uint32
	buf            []byte // host-side encoding buffer, reused

	conf   []byte // rp_configure input
	seed   uint64 // run seed
	rng    uint64
	calls  int
	spent  time.Duration
	stderr tail
	gen    uint64 // module generation, bumped on replacement
	open   map[uint32]*stream
	free   []*stream
	dead   bool

	msgBuf, extBuf []byte

	logWindow int64 // second (since epoch) of the log budget
	logCount  int
	logDrop   int
}

type exports struct {
	scratch, describe, configure, build, open, parse, close, gc api.Function
}

type instanceKey struct{}

func (a *Adapter) newInstance(ctx context.Context, watch bool) (*Instance, error) {
	in := &Instance{a: a, adapterName: a.desc.Name, stack: make([]uint64, 4), open: make(map[uint32]*stream)}
	if in.adapterName == "" {
		in.adapterName = a.source
	}
	if err := in.instantiate(ctx); err != nil {
		return nil, err
	}
	if watch && a.interrupt {
		in.watched = true
		a.watch(in)
	}
	return in, nil
}

// instantiate creates a fresh module (first use or replacement).
func (in *Instance) instantiate(parent context.Context) error {
	a := in.a
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(parent), instanceKey{}, in))
	in.cancelMu.Lock()
	in.ctx, in.cancel = ctx, cancel
	in.cancelMu.Unlock()
	mc := wazero.NewModuleConfig().WithName("").WithStdout(&in.stderr).WithStderr(&in.stderr)
	if a.hasInit {
		mc = mc.WithStartFunctions("_initialize")
	} else {
		mc = mc.WithStartFunctions()
	}
	in.timedOut.Store(false)
	t0 := in.beginCall()
	mod, err := a.rt.InstantiateModule(in.ctx, a.compiled, mc)
	in.endCall(t0)
	if err != nil {
		cancel()
		return &AdapterError{Adapter: in.adapterName, Call: "_initialize", Msg: in.trapMessage(err), Replaced: true}
	}
	in.mod = mod
	in.mem = mod.Memory()
	if in.mem == nil {
		mod.Close(in.ctx)
		return &AdapterError{Adapter: in.adapterName, Call: "instantiate", Msg: "module exports no memory"}
	}
	f := mod.ExportedFunction
	in.fn = exports{
		scratch: f("rp_scratch"), describe: f("rp_describe"), configure: f("rp_configure"),
		build: f("rp_build"), open: f("rp_open"), parse: f("rp_parse"), close: f("rp_close"), gc: f("rp_gc"),
	}
	in.inPtr, in.inCap, in.outPtr, in.outCap = 0, 0, 0, 0
	in.gen++
	in.dead = false
	in.calls = 0
	if err := in.ensureOut(DefaultOutputBuffer); err != nil {
		return err
	}
	return nil
}

// configure sends the run configuration (after instantiate).
func (in *Instance) configure() error {
	in.rng = in.seed
	_, err := in.callControl("rp_configure", in.fn.configure, in.conf)
	return err
}

// revive replaces a dead module.
func (in *Instance) revive() error {
	if !in.dead {
		return nil
	}
	if in.mod != nil {
		in.mod.Close(in.ctx)
	}
	in.cancelMu.Lock()
	in.cancel()
	in.cancelMu.Unlock()
	if err := in.instantiate(in.ctx); err != nil {
		return err
	}
	return in.configure()
}

// Release implements adapter.Instance: it frees the instance's module.
func (in *Instance) Release() error {
	if in.watched {
		in.a.unwatch(in)
		in.watched = false
	}
	var err error
	if in.mod != nil {
		err = in.mod.Close(in.ctx)
		in.mod = nil
	}
	in.cancelMu.Lock()
	if in.cancel != nil {
		in.cancel()
	}
	in.cancelMu.Unlock()
	return err
}

// Spent returns the total time this instance has spent in guest calls.
// Callers take differences to measure one request.
func (in *Instance) Spent() time.Duration { return in.spent }

// beginCall marks a call as running for the watchdog and returns its
// start (ns since epoch, > 0).
//
// Protocol with the watchdog: callStart holds the running call's start, 0
// when idle. The watchdog claims a call that overran by swapping its start
// for -1 and only then cancels; endCall swaps the start back to 0. If that
// swap fails, the watchdog fired, the context is cancelled, and the module
// is replaced before the next call even if this call completed. So a
// cancellation never hits an idle instance or a later call.
func (in *Instance) beginCall() int64 {
	t := time.Since(epoch).Nanoseconds() + 1
	if in.watched {
		in.callStart.Store(t)
	}
	return t
}

func (in *Instance) endCall(t0 int64) int64 {
	if in.watched && !in.callStart.CompareAndSwap(t0, 0) {
		in.dead = true
		in.callStart.Store(0)
	}
	return time.Since(epoch).Nanoseconds() + 1
}

func (in *Instance) fail(call, format string, args ...any) error {
	return &AdapterError{Adapter: in.adapterName, Call: call, Msg: fmt.Sprintf(format, args...)}
}

// call runs fn with up to two i32 arguments and returns the unpacked
// status and value of its i64 result. A trap or deadline kills the module.
func (in *Instance) call(name string, fn api.Function, a0, a1 uint32) (status, value uint32, err error) {
	if fn == nil {
		return 0, 0, in.fail(name, "not exported")
	}
	s := in.stack
	s[0], s[1] = uint64(a0), uint64(a1)
	t0 := in.beginCall()
	cerr := fn.CallWithStack(in.ctx, s)
	in.spent += time.Duration(in.endCall(t0) - t0)
	in.calls++
	if cerr != nil {
		in.dead = true
		return 0, 0, &AdapterError{Adapter: in.adapterName, Call: name, Msg: in.trapMessage(cerr), Replaced: true}
	}
	r := s[0]
	return uint32(r >> 32), uint32(r), nil
}

// trapMessage turns a wazero error into one line plus the guest's stderr
// tail.
func (in *Instance) trapMessage(err error) string {
	var msg string
	if in.timedOut.Load() {
		msg = fmt.Sprintf("exceeded the %v call deadline (runaway guest); instance replaced", in.a.cfg.Timeout)
	} else if ee, ok := errors.AsType[*sys.ExitError](err); ok {
		msg = fmt.Sprintf("module exited with code %d", ee.ExitCode())
	} else {
		msg, _, _ = strings.Cut(err.Error(), "\n")
		msg = "trap: " + msg
	}
	if t := in.stderr.String(); t != "" {
		msg += "; guest output: " + t
	}
	in.stderr.Reset()
	return msg
}

// statusError turns a non-OK status into an error, reading the message
// from the output buffer.
func (in *Instance) statusError(name string, status, value uint32) error {
	msg := ""
	if value > 0 && value <= maxMessage*4 {
		if b, ok := in.mem.Read(in.outPtr, value); ok {
			msg = string(b)
		}
	}
	if msg == "" {
		msg = "(no message)"
	}
	return in.fail(name, "%s: %s", statusName(status), msg)
}

// scratch asks the guest for buffer which with capacity n and checks the
// pointer.
func (in *Instance) scratch(which, n uint32) (uint32, error) {
	// rp_scratch returns an i32: it lands in the low half of the result.
	_, ptr, err := in.call("rp_scratch", in.fn.scratch, which, n)
	if err != nil {
		return 0, err
	}
	if ptr == 0 || uint64(ptr)+uint64(n) > uint64(in.mem.Size()) {
		return 0, in.fail("rp_scratch", "buffer %d of %d bytes at %#x lies outside the %d bytes of memory", which, n, ptr, in.mem.Size())
	}
	return ptr, nil
}

func (in *Instance) ensureIn(n int) error {
	if uint64(n) <= uint64(in.inCap) {
		return nil
	}
	if n > maxBuffer {
		return in.fail("rp_scratch", "input of %d bytes exceeds the %d-byte limit", n, maxBuffer)
	}
	c := max(uint32(n), min(in.inCap*2, maxBuffer), 4096)
	p, err := in.scratch(0, c)
	if err != nil {
		return err
	}
	in.inPtr, in.inCap = p, c
	return nil
}

func (in *Instance) ensureOut(n int) error {
	if uint64(n) <= uint64(in.outCap) {
		return nil
	}
	if n > maxBuffer {
		return in.fail("rp_scratch", "output of %d bytes exceeds the %d-byte limit", n, maxBuffer)
	}
	c := max(uint32(n), min(in.outCap*2, maxBuffer))
	p, err := in.scratch(1, c)
	if err != nil {
		return err
	}
	in.outPtr, in.outCap = p, c
	return nil
}

// writeInput copies b into the guest's input buffer.
func (in *Instance) writeInput(b []byte) error {
	if err := in.ensureIn(len(b)); err != nil {
		return err
	}
	if !in.mem.Write(in.inPtr, b) {
		return in.fail("input", "input buffer at %#x no longer inside memory", in.inPtr)
	}
	return nil
}

// output returns a view of n output bytes (valid until the next call).
func (in *Instance) output(name string, n uint32) ([]byte, error) {
	if n > in.outCap {
		return nil, in.fail(name, "returned %d output bytes, more than the %d-byte output buffer", n, in.outCap)
	}
	b, ok := in.mem.Read(in.outPtr, n)
	if !ok {
		return nil, in.fail(name, "output (%d bytes at %#x) lies outside memory", n, in.outPtr)
	}
	return b, nil
}

// callControl runs a pure JSON/struct call with one GROW retry and
// returns a copy of the output.
func (in *Instance) callControl(name string, fn api.Function, input []byte) ([]byte, error) {
	if err := in.writeInput(input); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		st, v, err := in.call(name, fn, uint32(len(input)), 0)
		if err != nil {
			return nil, err
		}
		switch {
		case st == statusOK:
			b, err := in.output(name, v)
			if err != nil {
				return nil, err
			}
			return append([]byte(nil), b...), nil
		case st == statusGrow && attempt == 0:
			if err := in.ensureOut(int(v)); err != nil {
				return nil, err
			}
			if err := in.writeInput(input); err != nil {
				return nil, err
			}
		default:
			return nil, in.statusError(name, st, v)
		}
	}
}

var _ adapter.Instance = (*Instance)(nil)

// Build implements adapter.Instance (rp_build). Call it ahead of the send
// time; out is reset first.
func (in *Instance) Build(req *adapter.BuildInput, out *adapter.HTTPRequest) error {
	if !in.a.desc.Builds {
		return in.fail("rp_build", "adapter %s does not build requests", in.adapterName)
	}
	if err := in.revive(); err != nil {
		return err
	}
	in.buf = appendBuildInput(in.buf[:0], req)
	if err := in.writeInput(in.buf); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		in.rng = req.Seed
		st, v, err := in.call("rp_build", in.fn.build, uint32(len(in.buf)), 0)
		if err != nil {
			return err
		}
		switch {
		case st == statusOK:
			b, err := in.output("rp_build", v)
			if err != nil {
				return err
			}
			if err := decodeRequest(b, in.a.desc.Path, out); err != nil {
				return in.fail("rp_build", "%v", err)
			}
			in.maybeGC()
			return nil
		case st == statusGrow && attempt == 0:
			if err := in.ensureOut(int(v)); err != nil {
				return err
			}
			if err := in.writeInput(in.buf); err != nil {
				return err
			}
		default:
			return in.statusError("rp_build", st, v)
		}
	}
}

// stream is the host-side state of one open context.
type stream struct {
	gen             uint64
	capture         bool
	text, reasoning []byte
}

// Open implements adapter.Instance (rp_open). random_u64 is reseeded from
// the run seed and ctx.
func (in *Instance) Open(ctx uint32, flags adapter.OpenFlags) error {
	if !in.a.desc.Parses {
		return in.fail("rp_open", "adapter %s does not parse responses", in.adapterName)
	}
	if st, ok := in.open[ctx]; ok && st.gen == in.gen {
		return in.fail("rp_open", "context %d already open", ctx)
	}
	if err := in.revive(); err != nil {
		return err
	}
	in.rng = in.seed ^ uint64(ctx)*0x9e3779b97f4a7c15
	st, v, err := in.call("rp_open", in.fn.open, ctx, uint32(flags))
	if err != nil {
		return err
	}
	if st != statusOK {
		return in.statusError("rp_open", st, v)
	}
	s := in.freeStream()
	s.gen, s.capture = in.gen, flags&adapter.OpenCaptureText != 0
	in.open[ctx] = s
	return nil
}

func (in *Instance) freeStream() *stream {
	if n := len(in.free); n > 0 {
		s := in.free[n-1]
		in.free = in.free[:n-1]
		s.text, s.reasoning = s.text[:0], s.reasoning[:0]
		return s
	}
	return &stream{}
}

func (in *Instance) stream(name string, ctx uint32) (*stream, error) {
	s, ok := in.open[ctx]
	switch {
	case !ok:
		return nil, in.fail(name, "context %d is not open", ctx)
	case s.gen != in.gen || in.dead:
		return nil, in.fail(name, "context %d was lost when the instance was replaced after an earlier failure", ctx)
	}
	return s, nil
}

// Parse implements adapter.Instance (rp_parse). Batches larger than the
// module's max_events_per_call are split.
func (in *Instance) Parse(ctx uint32, batch *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	s, err := in.stream("rp_parse", ctx)
	if err != nil {
		return dst, err
	}
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
		dst, err = in.parseBatch(ctx, s, first, events[:n], flags, dst)
		if err != nil {
			return dst, err
		}
		events = events[n:]
		first += uint32(n)
	}
	return dst, nil
}

func (in *Instance) parseBatch(ctx uint32, s *stream, first uint32, events []adapter.Event, flags adapter.BatchFlags, dst []adapter.Record) ([]adapter.Record, error) {
	maxRecs := len(events) * in.a.desc.MaxRecordsPerEvent
	need := recordsHeader + maxRecs*recordSize
	if s.capture {
		for i := range events {
			need += len(events[i].Data)
		}
	}
	if err := in.ensureOut(need); err != nil {
		return dst, err
	}
	in.buf = appendBatch(in.buf[:0], events, first, flags)
	if err := in.writeInput(in.buf); err != nil {
		return dst, err
	}
	st, v, err := in.call("rp_parse", in.fn.parse, ctx, uint32(len(in.buf)))
	if err != nil {
		return dst, err
	}
	if st != statusOK {
		return dst, in.statusError("rp_parse", st, v)
	}
	b, err := in.output("rp_parse", v)
	if err != nil {
		return dst, err
	}
	text, reasoning := &s.text, &s.reasoning
	if !s.capture {
		text, reasoning = nil, nil
	}
	dst, err = decodeRecords(b, first, uint32(len(events)), maxRecs, dst, text, reasoning)
	if err != nil {
		return dst, in.fail("rp_parse", "%v", err)
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
		delete(in.open, ctx)
		in.free = append(in.free, s0)
	}
	if err != nil {
		return err
	}
	if err := in.ensureOut(summaryFixedSize + maxMessage + maxExtras); err != nil {
		return err
	}
	st, v, err := in.call("rp_close", in.fn.close, ctx, 0)
	if err != nil {
		return err
	}
	if st != statusOK {
		return in.statusError("rp_close", st, v)
	}
	b, err := in.output("rp_close", v)
	if err != nil {
		return err
	}
	if err := decodeFinal(b, fin, &in.msgBuf, &in.extBuf); err != nil {
		return in.fail("rp_close", "%v", err)
	}
	if s.capture {
		fin.Text, fin.Reasoning = s.text, s.reasoning
	}
	in.maybeGC()
	return nil
}

// maybeGC calls rp_gc every 1,000 calls when exported.
func (in *Instance) maybeGC() {
	if in.fn.gc == nil || in.calls < 1000 {
		return
	}
	in.calls = 0
	t0 := in.beginCall()
	err := in.fn.gc.CallWithStack(in.ctx, in.stack)
	in.spent += time.Duration(in.endCall(t0) - t0)
	if err != nil {
		in.dead = true
	}
}

// tail keeps the last bytes a guest wrote to stdout/stderr.
type tail struct {
	b []byte
}

const tailMax = 512

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > tailMax {
		p = p[len(p)-tailMax:]
	}
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return n, nil
}

func (t *tail) String() string { return strings.TrimSpace(string(t.b)) }
func (t *tail) Reset()         { t.b = t.b[:0] }
