package wasm

import ()

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
