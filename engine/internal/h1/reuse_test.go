package h1

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestReuseStrategies: the server records each request's connection
// (its remote address). Under ReuseSticky with two connections at most,
// a session's requests share one connection that no other session
// uses; a third session closes the connection parked longest (B's), so
// B's next request gets a new one; after EndSession the session's
// connection is closed. Under ReuseNever every request has its own.
func TestReuseStrategies(t *testing.T) {
	var mu sync.Mutex
	var addrs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		addrs = append(addrs, r.RemoteAddr)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okJSON)
	}))
	defer srv.Close()
	send := func(t *testing.T, c *Client, k *Caller, session uint64, end bool) {
		t.Helper()
		req := chat(c, false)
		req.Session, req.EndSession = session, end
		var st Stamps
		var h recorder
		if err := k.Do(context.Background(), req, &st, &h); err != nil || h.status != 200 {
			t.Fatalf("session %d: status %d: %v", session, h.status, err)
		}
	}
	t.Run("sticky", func(t *testing.T) {
		addrs = nil
		c := newClient(t, srv.URL, func(cfg *Config) { cfg.Reuse, cfg.MaxConnections = ReuseSticky, 2 })
		k := c.NewCaller()
		const a, b, x = 1, 2, 3
		for _, s := range []struct {
			session uint64
			end     bool
		}{{a, false}, {b, false}, {a, false}, {x, false}, {a, true}, {b, true}, {a, false}} {
			send(t, c, k, s.session, s.end)
		}
		// a a a: one connection; b's second request came after x closed
		// b's parked one; a's last request is a new run after EndSession.
		owner := map[string]int{}
		for i, s := range []int{a, b, a, x, a, -b, -a} {
			if o, ok := owner[addrs[i]]; ok && o != s {
				t.Errorf("request %d (session %d) on %s, the connection of session %d", i, s, addrs[i], o)
			}
			owner[addrs[i]] = s
		}
		if addrs[0] != addrs[2] || addrs[2] != addrs[4] {
			t.Errorf("session a on %v, want one connection", []string{addrs[0], addrs[2], addrs[4]})
		}
		if len(owner) != 5 {
			t.Errorf("%d connections for %v, want 5", len(owner), addrs)
		}
	})
	t.Run("never", func(t *testing.T) {
		addrs = nil
		c := newClient(t, srv.URL, func(cfg *Config) { cfg.Reuse = ReuseNever })
		k := c.NewCaller()
		for range 4 {
			send(t, c, k, 0, false)
		}
		seen := map[string]bool{}
		for _, a := range addrs {
			if seen[a] {
				t.Errorf("connection %s carried two requests: %v", a, addrs)
			}
			seen[a] = true
		}
	})
}

// TestStickyWaiterAtMax: under ReuseSticky with one connection at most,
// many sessions sending at once, none ending, all finish: a request
// waiting for room is woken when a connection is parked, and closes it
// for its own session.
func TestStickyWaiterAtMax(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okJSON)
	}))
	defer srv.Close()
	c := newClient(t, srv.URL, func(cfg *Config) { cfg.Reuse, cfg.MaxConnections = ReuseSticky, 1 })
	var wg sync.WaitGroup
	for s := range 8 {
		k := c.NewCaller()
		wg.Go(func() {
			for turn := range 3 {
				req := chat(c, false)
				req.Session = uint64(s + 1) // no session ends: only parking frees room
				var st Stamps
				var h recorder
				if err := k.Do(context.Background(), req, &st, &h); err != nil || h.status != 200 {
					t.Errorf("session %d turn %d: status %d: %v", s+1, turn, h.status, err)
				}
			}
		})
	}
	wg.Wait()
}
