package mockserver

import (
	"io"
	"net/http"
)

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
