package wasm

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// pool holds an adapter's modules. At most max exist at once (idle,
// leased or being instantiated), so the guests' linear memory stays within
// max × the per-instance limit, which Load keeps within
// Config.MemoryBudget. Instances lease a module per call sequence
// (Instance.lease) and wait while all max are leased.
type pool struct {
	mu     sync.Mutex
	cond   sync.Cond // signalled when a module is returned or given up
	idle   []*module
	live   int // modules that exist or are being instantiated
	max    int
	peak   int
	leases int64
	waits  int64
	closed bool

	memory, peakMemory atomic.Int64 // committed linear memory, bytes
}

// PoolStats are an adapter's module pool counters ([Adapter.Stats]).
type PoolStats struct {
	MaxInstances  int   // modules the memory budget allows
	Instances     int   // modules alive now (idle or leased)
	PeakInstances int   // most modules alive at once
	Leased        int   // modules leased now
	Leases        int64 // leases granted
	Waits         int64 // times a call waited for a module
	Memory        int64 // linear memory of the modules alive now, bytes
	PeakMemory    int64 // most linear memory alive at once, bytes
}

func (p *pool) init(n int) {
	p.cond.L = &p.mu
	p.max = n
}

// addMemory counts a change of a module's linear memory.
func (p *pool) addMemory(d int64) {
	if d == 0 {
		return
	}
	n := p.memory.Add(d)
	for {
		peak := p.peakMemory.Load()
		if n <= peak || p.peakMemory.CompareAndSwap(peak, n) {
			return
		}
	}
}

func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{MaxInstances: p.max, Instances: p.live, PeakInstances: p.peak, Leased: p.live - len(p.idle),
		Leases: p.leases, Waits: p.waits, Memory: p.memory.Load(), PeakMemory: p.peakMemory.Load()}
}

// close marks the pool closed, wakes every waiter and returns the idle
// modules for the caller to drop.
func (p *pool) close() []*module {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.live -= len(idle)
	p.cond.Broadcast()
	return idle
}

// take removes an idle module, preferring one configured with conf and
// seed. The caller holds p.mu and has checked that one is idle.
func (p *pool) take(conf []byte, seed uint64) *module {
	i := len(p.idle) - 1
	for j := i; j >= 0; j-- {
		if m := p.idle[j]; m.configured && m.seed == seed && bytes.Equal(m.conf, conf) {
			i = j
			break
		}
	}
	m := p.idle[i]
	p.idle[i] = p.idle[len(p.idle)-1]
	p.idle = p.idle[:len(p.idle)-1]
	return m
}

// acquire leases a module configured with conf and seed: an idle one, a
// new one while the budget allows, or else the next one returned.
func (a *Adapter) acquire(conf []byte, seed uint64) (*module, error) {
	p := &a.pool
	p.mu.Lock()
	var m *module
	for m == nil {
		switch {
		case p.closed:
			p.mu.Unlock()
			return nil, ErrClosed
		case len(p.idle) > 0:
			m = p.take(conf, seed)
		case p.live < p.max:
			p.live++
			p.peak = max(p.peak, p.live)
			p.mu.Unlock()
			var err error
			if m, err = a.newModule(a.ctx, true); err != nil {
				p.mu.Lock()
				p.live--
				p.cond.Signal()
				p.mu.Unlock()
				return nil, err
			}
			p.mu.Lock()
		default:
			p.waits++
			p.cond.Wait()
		}
	}
	p.leases++
	p.mu.Unlock()
	if err := m.prepare(conf, seed); err != nil {
		a.release(m)
		return nil, err
	}
	return m, nil
}

// release returns a leased module to the pool. A module whose
// replacement failed (it has no wazero module) is given up, making room
// for a new one.
func (a *Adapter) release(m *module) {
	p := &a.pool
	p.mu.Lock()
	if p.closed || m.mod == nil {
		p.live--
		p.cond.Signal()
		p.mu.Unlock()
		m.drop()
		return
	}
	p.idle = append(p.idle, m)
	p.cond.Signal()
	p.mu.Unlock()
}
