package wasm

import (
	"bytes"
)

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
