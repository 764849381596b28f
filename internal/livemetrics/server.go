package livemetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLinger is how long a [Server] keeps serving after its run ended
// when no scrape comes (--metrics-linger): one default scrape interval
// of Prometheus's example configuration (15 s), so that a scrape that
// starts after the end sees the final values.
const DefaultLinger = 15 * time.Second

// Path is where the metrics are served; every other path is 404.
const Path = "/metrics"

// Server serves a run's [Metrics] on one listener. It serves an empty
// page until [Server.Serve] names the metrics. It is safe for concurrent
// use.
type Server struct {
	ln  net.Listener
	srv *http.Server
	h   atomic.Pointer[http.Handler]
	// ended is when the run ended (0: running), in Unix nanoseconds.
	mu    sync.Mutex
	ended int64
	after chan struct{} // closed by the first scrape begun after ended
	errc  chan error
}

// Listen listens on addr (HOST:PORT; an empty host is every interface,
// port 0 a free one) and starts serving.
func Listen(addr string) (*Server, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("listen %q: want HOST:PORT such as :9464 or 127.0.0.1:9464: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	s := &Server{ln: ln, after: make(chan struct{}), errc: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, s.serveMetrics)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.errc <- err
	}()
	return s, nil
}

// Addr is the address the server listens on (with the port chosen when
// Listen was given port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve makes the server serve m from now on.
func (s *Server) Serve(m *Metrics) {
	h := m.Handler()
	s.h.Store(&h)
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	late := s.ended != 0
	s.mu.Unlock()
	if h := s.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
	} else {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	}
	if late { // begun after the end: the values it read are the final ones
		s.mu.Lock()
		select {
		case <-s.after:
		default:
			close(s.after)
		}
		s.mu.Unlock()
	}
}

// Linger marks the run ended and waits until a scrape begun after that
// has been answered (it read the final values), d has passed, or ctx is
// done, and reports whether a scrape came. A d ≤ 0 returns at once.
func (s *Server) Linger(ctx context.Context, d time.Duration) bool {
	s.mu.Lock()
	if s.ended == 0 {
		s.ended = time.Now().UnixNano()
	}
	after := s.after
	s.mu.Unlock()
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-after:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// Close stops the server, letting a scrape in progress finish for up to
// a second (even when ctx is done), and returns the error that stopped
// serving, if any.
func (s *Server) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	return errors.Join(err, <-s.errc)
}
