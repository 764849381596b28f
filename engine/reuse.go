package engine

import (
	"fmt"
	"strings"

	"github.com/reprise-bench/reprise/engine/internal/h1"
)

// ConnReuse says which requests share a connection: AIPerf's
// --connection-reuse-strategy. The zero value is ConnPooled.
type ConnReuse uint8

// The connection reuse strategies.
const (
	// ConnPooled keeps connections alive in one pool that every request
	// takes from (Config.MaxConnections caps it).
	ConnPooled = ConnReuse(h1.ReusePooled)
	// ConnNever opens a connection per request and closes it after the
	// response (Connection: close): every request pays DNS and connect.
	ConnNever = ConnReuse(h1.ReuseNever)
	// ConnSticky gives each session (Prepared.Session) a connection of
	// its own, reused by its turns and closed after its last
	// (Prepared.EndSession); two sessions never share one. A connection
	// parked between two turns counts against Config.MaxConnections; at
	// the cap the one parked longest is closed for a new session.
	ConnSticky = ConnReuse(h1.ReuseSticky)
)

var connReuseNames = [...]string{"pooled", "never", "sticky-user-sessions"}

// String returns the strategy's AIPerf name: pooled, never or
// sticky-user-sessions.
func (r ConnReuse) String() string {
	if int(r) < len(connReuseNames) {
		return connReuseNames[r]
	}
	return fmt.Sprintf("ConnReuse(%d)", r)
}

// ParseConnReuse returns the strategy named s (its String).
func ParseConnReuse(s string) (ConnReuse, error) {
	for i, n := range connReuseNames {
		if s == n {
			return ConnReuse(i), nil
		}
	}
	return 0, fmt.Errorf("connection reuse strategy %q: want %s", s, strings.Join(connReuseNames[:], ", "))
}
