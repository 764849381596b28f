package mockserver

import (
	"io"
	"net/http"
	"sync"
)

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

// Controls returns a copy of the control requests served so far, in
// arrival order. Callers own the result.
func (s *Server) Controls() []Control { return s.ctl.snapshot() }

// serveControl answers a control request as vLLM does (200, empty body)
// or, for /flush_cache, as SGLang does (200, a line of text). The
// llama.cpp flavor has none of them: 404 with its error body, as
// llama-server answers (testdata/servercontrol in the root package).
func (s *Server) serveControl(k ControlKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<16))
		if s.cfg.Flavor == FlavorLlamaCPP {
			s.setHeaders(w.Header(), false)
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"message":"File Not Found","type":"not_found_error","code":404}}`)
			return
		}
		x := Control{Kind: k, ReceivedNS: s.wall(s.mono())}
		s.mu.Lock()
		x.InFlight = s.inflight
		s.mu.Unlock()
		if k == ControlResetPrefixCache || k == ControlFlushCache {
			x.Dropped = s.cache.clear()
		}
		s.ctl.add(x)
		w.Header()["Server"] = hdrServer
		if k == ControlFlushCache {
			w.Header()["Content-Type"] = []string{"text/plain; charset=utf-8"}
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n")
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

// clear empties the cache and returns how many blocks it held.
func (c *prefixCache) clear() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.used
	clear(c.index)
	c.nodes = c.nodes[:1]
	c.nodes[0] = lruNode{}
	c.used = 0
	return n
}
