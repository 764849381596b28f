package h1

import "time"

// Reuse says which requests share a connection.
type Reuse uint8

// The reuse strategies (AIPerf's --connection-reuse-strategy).
const (
	// ReusePooled keeps connections alive in one pool: any request takes
	// any idle connection (the default).
	ReusePooled Reuse = iota
	// ReuseNever sends every request on a connection of its own, closed
	// after its response (Connection: close).
	ReuseNever
	// ReuseSticky gives every session (Request.Session) a connection of
	// its own: its requests go on it one after the other, no other
	// session's ever does, and it is closed after the session's last
	// request (Request.EndSession). A request without a session is sent
	// as with ReuseNever.
	ReuseSticky
)

// closesAfter reports whether req's connection is closed after its
// response under the client's strategy.
func (c *Client) closesAfter(req *Request) bool {
	switch c.reuse {
	case ReuseNever:
		return true
	case ReuseSticky:
		return req.Session == 0 || req.EndSession
	}
	return false
}

// takeSession removes and returns session's parked connection, nil when
// it has none. c.mu must be held.
func (c *Client) takeSession(session uint64) *conn {
	cn := c.sessions[session]
	if cn != nil {
		delete(c.sessions, session)
	}
	return cn
}

// evictSession closes the connection parked longest of another session
// than session, to make room under MaxConnections; false when none is
// parked. c.mu must be held; it is held again on return.
func (c *Client) evictSession() bool {
	var oldest uint64
	var cn *conn
	for s, x := range c.sessions {
		if cn == nil || x.idleAt.Before(cn.idleAt) {
			oldest, cn = s, x
		}
	}
	if cn == nil {
		return false
	}
	delete(c.sessions, oldest)
	c.mu.Unlock()
	c.discard(cn)
	c.mu.Lock()
	return true
}

// park keeps cn, after a complete response of session, for the
// session's next request.
func (c *Client) park(cn *conn, session uint64) {
	cn.idleAt = time.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.discard(cn)
		return
	}
	if c.sessions == nil {
		c.sessions = map[uint64]*conn{}
	}
	old := c.sessions[session]
	c.sessions[session] = cn
	c.wakeOne() // a request waiting at MaxConnections may close it for its own session
	c.mu.Unlock()
	if old != nil {
		c.discard(old) // two requests of one session at once (a DAG): keep the newer
	}
}
