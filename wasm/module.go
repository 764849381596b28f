package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/reprise-bench/reprise/engine/adapter"
)

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
