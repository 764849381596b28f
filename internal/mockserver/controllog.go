// The log of control requests (control.go serves them): what Server.Controls returns.

package mockserver

import "sync"

// ControlKind is a control request the mock serves beside the API:
// a prefix-cache reset or a profiler start or stop.
type ControlKind string

// The control requests, by the server whose path they copy.
const (
	// ControlResetPrefixCache is vLLM's POST /reset_prefix_cache.
	ControlResetPrefixCache ControlKind = "reset_prefix_cache"
	// ControlFlushCache is SGLang's POST /flush_cache.
	ControlFlushCache ControlKind = "flush_cache"
	// ControlStartProfile and ControlStopProfile are vLLM's and
	// SGLang's POST /start_profile and /stop_profile.
	ControlStartProfile ControlKind = "start_profile"
	ControlStopProfile  ControlKind = "stop_profile"
)

// Control is one control request the mock served: its kind, when it
// arrived (Unix ns, the oracle log's clock), the cached blocks it
// dropped (a reset) and the completion requests in flight then.
type Control struct {
	Kind       ControlKind
	ReceivedNS int64
	Dropped    int
	InFlight   int
}

// controls is the log of control requests. Safe for concurrent use.
type controls struct {
	mu  sync.Mutex
	log []Control
}

func (c *controls) add(x Control) {
	c.mu.Lock()
	c.log = append(c.log, x)
	c.mu.Unlock()
}

func (c *controls) snapshot() []Control {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Control(nil), c.log...)
}
