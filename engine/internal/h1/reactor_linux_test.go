package h1

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestReactorGiveUps: streams read by the reactors while their callers
// give up at random moments — before the first byte, inside the body, as
// the response ends — all end, each either complete or given up, and the
// reactors are left holding no socket. Run with -race, it also checks the
// hand-over between a reactor's reads and a caller that gives up.
func TestReactorGiveUps(t *testing.T) {
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT, cfg.ITL = 2*time.Millisecond, 2*time.Millisecond
	srv, err := mockserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := newClient(t, srv.URL(), nil)
	req := chat(c, true) // 16 tokens: about 35 ms per stream
	errGiveUp := errors.New("given up")
	const callers, each = 16, 12
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for i := range callers {
		k := c.NewCaller()
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		wg.Go(func() {
			for j := range each {
				ctx, cancel := context.WithCancelCause(context.Background())
				if j%2 == 1 { // every other request is given up after 0–45 ms
					time.AfterFunc(time.Duration(rng.IntN(45_000))*time.Microsecond, func() { cancel(errGiveUp) })
				}
				var st Stamps
				var h recorder
				err := k.Do(ctx, req, &st, &h)
				gaveUp := context.Cause(ctx) == errGiveUp
				cancel(nil)
				outcome := "complete"
				switch {
				case err == nil && h.status == 200 && bytes.HasSuffix(h.body, []byte("data: [DONE]\n\n")):
				case err != nil && gaveUp:
					outcome = "given up"
				default:
					outcome = "failed"
					t.Errorf("request %d/%d: status %d, %d body bytes: %v", i, j, h.status, len(h.body), err)
				}
				mu.Lock()
				outcomes[outcome]++
				mu.Unlock()
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("requests still running after 60 s: a response end was lost")
	}
	if outcomes["given up"] == 0 || outcomes["complete"] == 0 {
		t.Errorf("outcomes %v, want both complete and given-up requests", outcomes)
	}
	t.Logf("outcomes %v", outcomes)
	if len(c.reactors) == 0 {
		t.Fatal("no reactor ran")
	}
	for _, rc := range c.reactors {
		if n := rc.held(); n != 0 {
			t.Errorf("a reactor still holds %d sockets", n)
		}
	}
}
