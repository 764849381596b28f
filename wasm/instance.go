// Hot path: Instance.Parse and Instance.Build; allocation budget in
// TestParseAllocs.

package wasm

import (
	"bytes"
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

// Instance is one worker goroutine's handle on an adapter. It is not safe
// for concurrent use.
//
// An Instance owns no module. Each [Instance.Build], and each response
// context from its first [Instance.Parse] (or its [Instance.Close]) to its
// Close, runs on a module leased from the adapter's pool, whose size
// [Config.MemoryBudget] bounds; when every module is leased, the call waits
// for one. rp_open reaches the guest when the context's events do (the
// engine parses Wasm adapters deferred), so a context holds a module only
// while its events are parsed, never while its response is read. After a
// trap or a deadline the module is replaced before its next call; contexts
// opened on the old module then fail with an [*AdapterError].
type Instance struct {
	a     *Adapter
	conf  []byte // rp_configure input
	seed  uint64 // run seed
	m     *module
	held  int // contexts opened on m; m returns to the pool at 0
	open  map[uint32]*stream
	free  []*stream
	spent time.Duration
}

// module is one instantiated wazero module, leased by one Instance at a
// time (or idle in the adapter's pool).
type module struct {
	a           *Adapter
	adapterName string
	mod         api.Module
	mem         api.Memory
	fn          exports
	stack       []uint64
	owner       *Instance // the lease holder, whose Spent grows

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

	conf       []byte // the configuration rp_configure got (or gets)
	seed       uint64
	configured bool
	rng        uint64
	calls      int
	stderr     tail
	gen        uint64 // module generation, bumped on replacement
	dead       bool
	memSize    int64 // linear memory counted in the pool's total

	msgBuf, extBuf []byte

	logWindow int64 // second (since epoch) of the log budget
	logCount  int
	logDrop   int
}

type exports struct {
	scratch, describe, configure, build, open, parse, close, gc api.Function
}

type instanceKey struct{}

func (a *Adapter) newModule(ctx context.Context, watch bool) (*module, error) {
	m := &module{a: a, adapterName: a.desc.Name, stack: make([]uint64, 4)}
	if m.adapterName == "" {
		m.adapterName = a.source
	}
	if err := m.instantiate(ctx); err != nil {
		m.drop()
		return nil, err
	}
	if watch && a.interrupt {
		m.watched = true
		a.watch(m)
	}
	return m, nil
}

// instantiate creates a fresh module (first use or replacement).
func (m *module) instantiate(parent context.Context) error {
	a := m.a
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(parent), instanceKey{}, m))
	m.cancelMu.Lock()
	m.ctx, m.cancel = ctx, cancel
	m.cancelMu.Unlock()
	mc := wazero.NewModuleConfig().WithName("").WithStdout(&m.stderr).WithStderr(&m.stderr)
	if a.hasInit {
		mc = mc.WithStartFunctions("_initialize")
	} else {
		mc = mc.WithStartFunctions()
	}
	m.timedOut.Store(false)
	t0 := m.beginCall()
	mod, err := a.rt.InstantiateModule(m.ctx, a.compiled, mc)
	m.endCall(t0)
	if err != nil {
		cancel()
		return &AdapterError{Adapter: m.adapterName, Call: "_initialize", Msg: m.trapMessage(err), Replaced: true}
	}
	m.mod = mod
	m.mem = mod.Memory()
	if m.mem == nil {
		mod.Close(m.ctx)
		m.mod = nil
		return &AdapterError{Adapter: m.adapterName, Call: "instantiate", Msg: "module exports no memory"}
	}
	m.track()
	f := mod.ExportedFunction
	m.fn = exports{
		scratch: f("rp_scratch"), describe: f("rp_describe"), configure: f("rp_configure"),
		build: f("rp_build"), open: f("rp_open"), parse: f("rp_parse"), close: f("rp_close"), gc: f("rp_gc"),
	}
	m.inPtr, m.inCap, m.outPtr, m.outCap = 0, 0, 0, 0
	m.gen++
	m.dead = false
	m.configured = false
	m.calls = 0
	if err := m.ensureOut(DefaultOutputBuffer); err != nil {
		return err
	}
	return nil
}

// track counts a change of the module's linear memory in the pool's total.
func (m *module) track() {
	if m.mem == nil {
		return
	}
	if sz := int64(m.mem.Size()); sz != m.memSize {
		m.a.pool.addMemory(sz - m.memSize)
		m.memSize = sz
	}
}

// closeModule closes the wazero module (not the watchdog registration).
func (m *module) closeModule() {
	if m.mod != nil {
		m.mod.Close(m.ctx)
		m.mod, m.mem = nil, nil
	}
	m.a.pool.addMemory(-m.memSize)
	m.memSize = 0
	m.cancelMu.Lock()
	if m.cancel != nil {
		m.cancel()
	}
	m.cancelMu.Unlock()
}

// drop frees the module for good.
func (m *module) drop() {
	if m.watched {
		m.a.unwatch(m)
		m.watched = false
	}
	m.closeModule()
}

// prepare readies a module taken from the pool for a lease with conf and
// seed: a module configured differently is replaced, a dead one revived.
func (m *module) prepare(conf []byte, seed uint64) error {
	if m.configured && (m.seed != seed || !bytes.Equal(m.conf, conf)) {
		m.dead = true // rp_configure is sent once per module
	}
	m.conf, m.seed = conf, seed
	if m.dead || m.mod == nil {
		return m.revive()
	}
	if !m.configured {
		return m.configure()
	}
	return nil
}

// configure sends the run configuration (after instantiate).
func (m *module) configure() error {
	m.rng = m.seed
	if _, err := m.callControl("rp_configure", m.fn.configure, m.conf); err != nil {
		m.dead = true // a module that rejected its configuration is not reused
		if ae, ok := err.(*AdapterError); ok && ae.Call == "rp_configure" {
			return &ConfigError{Adapter: m.adapterName, Err: ae}
		}
		return err
	}
	m.configured = true
	return nil
}

// revive replaces a dead module and configures the new one.
func (m *module) revive() error {
	if !m.dead && m.mod != nil {
		return nil
	}
	m.closeModule()
	if err := m.instantiate(m.ctx); err != nil {
		return err
	}
	return m.configure()
}

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

// spent adds the time of a guest call to the lease holder's total.
func (m *module) spent(d int64) {
	if m.owner != nil {
		m.owner.spent += time.Duration(d)
	}
}

// beginCall marks a call as running for the watchdog and returns its
// start (ns since epoch, > 0).
//
// Protocol with the watchdog: callStart holds the running call's start, 0
// when idle. The watchdog claims a call that overran by swapping its start
// for -1 and only then cancels; endCall swaps the start back to 0. If that
// swap fails, the watchdog fired, the context is cancelled, and the module
// is replaced before the next call even if this call completed. So a
// cancellation never hits an idle instance or a later call.
func (m *module) beginCall() int64 {
	t := time.Since(epoch).Nanoseconds() + 1
	if m.watched {
		m.callStart.Store(t)
	}
	return t
}

func (m *module) endCall(t0 int64) int64 {
	if m.watched && !m.callStart.CompareAndSwap(t0, 0) {
		m.dead = true
		m.callStart.Store(0)
	}
	return time.Since(epoch).Nanoseconds() + 1
}

func (m *module) fail(call, format string, args ...any) error {
	return &AdapterError{Adapter: m.adapterName, Call: call, Msg: fmt.Sprintf(format, args...)}
}

// call runs fn with up to two i32 arguments and returns the unpacked
// status and value of its i64 result. A trap or deadline kills the module.
func (m *module) call(name string, fn api.Function, a0, a1 uint32) (status, value uint32, err error) {
	if fn == nil {
		return 0, 0, m.fail(name, "not exported")
	}
	s := m.stack
	s[0], s[1] = uint64(a0), uint64(a1)
	t0 := m.beginCall()
	cerr := fn.CallWithStack(m.ctx, s)
	m.spent(m.endCall(t0) - t0)
	m.calls++
	m.track()
	if cerr != nil {
		m.dead = true
		return 0, 0, &AdapterError{Adapter: m.adapterName, Call: name, Msg: m.trapMessage(cerr), Replaced: true}
	}
	r := s[0]
	return uint32(r >> 32), uint32(r), nil
}

// trapMessage turns a wazero error into one line plus the guest's stderr
// tail.
func (m *module) trapMessage(err error) string {
	var msg string
	if m.timedOut.Load() {
		msg = fmt.Sprintf("exceeded the %v call deadline (runaway guest); instance replaced", m.a.cfg.Timeout)
	} else if ee, ok := errors.AsType[*sys.ExitError](err); ok {
		msg = fmt.Sprintf("module exited with code %d", ee.ExitCode())
	} else {
		msg, _, _ = strings.Cut(err.Error(), "\n")
		msg = "trap: " + msg
	}
	if t := m.stderr.String(); t != "" {
		msg += "; guest output: " + t
	}
	m.stderr.Reset()
	return msg
}

// statusError turns a non-OK status into an error, reading the message
// from the output buffer.
func (m *module) statusError(name string, status, value uint32) error {
	msg := ""
	if value > 0 && value <= maxMessage*4 {
		if b, ok := m.mem.Read(m.outPtr, value); ok {
			msg = string(b)
		}
	}
	if msg == "" {
		msg = "(no message)"
	}
	return m.fail(name, "%s: %s", statusName(status), msg)
}

// scratch asks the guest for buffer which with capacity n and checks the
// pointer.
func (m *module) scratch(which, n uint32) (uint32, error) {
	// rp_scratch returns an i32: it lands in the low half of the result.
	_, ptr, err := m.call("rp_scratch", m.fn.scratch, which, n)
	if err != nil {
		return 0, err
	}
	if ptr == 0 || uint64(ptr)+uint64(n) > uint64(m.mem.Size()) {
		return 0, m.fail("rp_scratch", "buffer %d of %d bytes at %#x lies outside the %d bytes of memory", which, n, ptr, m.mem.Size())
	}
	return ptr, nil
}

func (m *module) ensureIn(n int) error {
	if uint64(n) <= uint64(m.inCap) {
		return nil
	}
	if n > maxBuffer {
		return m.fail("rp_scratch", "input of %d bytes exceeds the %d-byte limit", n, maxBuffer)
	}
	c := max(uint32(n), min(m.inCap*2, maxBuffer), 4096)
	p, err := m.scratch(0, c)
	if err != nil {
		return err
	}
	m.inPtr, m.inCap = p, c
	return nil
}

func (m *module) ensureOut(n int) error {
	if uint64(n) <= uint64(m.outCap) {
		return nil
	}
	if n > maxBuffer {
		return m.fail("rp_scratch", "output of %d bytes exceeds the %d-byte limit", n, maxBuffer)
	}
	c := max(uint32(n), min(m.outCap*2, maxBuffer))
	p, err := m.scratch(1, c)
	if err != nil {
		return err
	}
	m.outPtr, m.outCap = p, c
	return nil
}

// writeInput copies b into the guest's input buffer.
func (m *module) writeInput(b []byte) error {
	if err := m.ensureIn(len(b)); err != nil {
		return err
	}
	if !m.mem.Write(m.inPtr, b) {
		return m.fail("input", "input buffer at %#x no longer inside memory", m.inPtr)
	}
	return nil
}

// output returns a view of n output bytes (valid until the next call).
func (m *module) output(name string, n uint32) ([]byte, error) {
	if n > m.outCap {
		return nil, m.fail(name, "returned %d output bytes, more than the %d-byte output buffer", n, m.outCap)
	}
	b, ok := m.mem.Read(m.outPtr, n)
	if !ok {
		return nil, m.fail(name, "output (%d bytes at %#x) lies outside memory", n, m.outPtr)
	}
	return b, nil
}

// callControl runs a pure JSON/struct call with one GROW retry and
// returns a copy of the output.
func (m *module) callControl(name string, fn api.Function, input []byte) ([]byte, error) {
	if err := m.writeInput(input); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		st, v, err := m.call(name, fn, uint32(len(input)), 0)
		if err != nil {
			return nil, err
		}
		switch {
		case st == statusOK:
			b, err := m.output(name, v)
			if err != nil {
				return nil, err
			}
			return append([]byte(nil), b...), nil
		case st == statusGrow && attempt == 0:
			if err := m.ensureOut(int(v)); err != nil {
				return nil, err
			}
			if err := m.writeInput(input); err != nil {
				return nil, err
			}
		default:
			return nil, m.statusError(name, st, v)
		}
	}
}

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

func (m *module) build(req *adapter.BuildInput, out *adapter.HTTPRequest) error {
	if err := m.revive(); err != nil {
		return err
	}
	m.buf = appendBuildInput(m.buf[:0], req)
	if err := m.writeInput(m.buf); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		m.rng = req.Seed
		st, v, err := m.call("rp_build", m.fn.build, uint32(len(m.buf)), 0)
		if err != nil {
			return err
		}
		switch {
		case st == statusOK:
			b, err := m.output("rp_build", v)
			if err != nil {
				return err
			}
			if err := decodeRequest(b, m.a.desc.Path, out); err != nil {
				return m.fail("rp_build", "%v", err)
			}
			m.maybeGC()
			return nil
		case st == statusGrow && attempt == 0:
			if err := m.ensureOut(int(v)); err != nil {
				return err
			}
			if err := m.writeInput(m.buf); err != nil {
				return err
			}
		default:
			return m.statusError("rp_build", st, v)
		}
	}
}

// stream is the host-side state of one open context.
type stream struct {
	m               *module // the module rp_open reached; nil before
	gen             uint64  // m's generation then
	openErr         error   // rp_open failed
	flags           adapter.OpenFlags
	capture         bool
	text, reasoning []byte
	other           []byte // choices ≥ 1 (adapter.Final.Other)
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

func (m *module) parseBatch(ctx uint32, s *stream, first uint32, events []adapter.Event, flags adapter.BatchFlags, dst []adapter.Record) ([]adapter.Record, error) {
	maxRecs := len(events) * m.a.desc.MaxRecordsPerEvent
	need := recordsHeader + maxRecs*recordSize
	if s.capture {
		for i := range events {
			need += len(events[i].Data)
		}
	}
	if err := m.ensureOut(need); err != nil {
		return dst, err
	}
	m.buf = appendBatch(m.buf[:0], events, first, flags)
	if err := m.writeInput(m.buf); err != nil {
		return dst, err
	}
	st, v, err := m.call("rp_parse", m.fn.parse, ctx, uint32(len(m.buf)))
	if err != nil {
		return dst, err
	}
	if st != statusOK {
		return dst, m.statusError("rp_parse", st, v)
	}
	b, err := m.output("rp_parse", v)
	if err != nil {
		return dst, err
	}
	text, reasoning, other := &s.text, &s.reasoning, &s.other
	if !s.capture {
		text, reasoning, other = nil, nil, nil
	}
	dst, err = decodeRecords(b, first, uint32(len(events)), maxRecs, dst, text, reasoning, other)
	if err != nil {
		return dst, m.fail("rp_parse", "%v", err)
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

func (m *module) closeContext(ctx uint32, s *stream, fin *adapter.Final) error {
	if err := m.ensureOut(summaryFixedSize + maxMessage + maxExtras); err != nil {
		return err
	}
	st, v, err := m.call("rp_close", m.fn.close, ctx, 0)
	if err != nil {
		return err
	}
	if st != statusOK {
		return m.statusError("rp_close", st, v)
	}
	b, err := m.output("rp_close", v)
	if err != nil {
		return err
	}
	if err := decodeFinal(b, fin, &m.msgBuf, &m.extBuf); err != nil {
		return m.fail("rp_close", "%v", err)
	}
	if s.capture {
		fin.Text, fin.Reasoning, fin.Other = s.text, s.reasoning, s.other
	}
	m.maybeGC()
	return nil
}

// maybeGC calls rp_gc every 1,000 calls when exported.
func (m *module) maybeGC() {
	if m.fn.gc == nil || m.calls < 1000 {
		return
	}
	m.calls = 0
	t0 := m.beginCall()
	err := m.fn.gc.CallWithStack(m.ctx, m.stack)
	m.spent(m.endCall(t0) - t0)
	m.track()
	if err != nil {
		m.dead = true
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
