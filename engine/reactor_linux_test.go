package engine

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/record"
)

// TestReactorGiveUps: streams read by the reactors while their senders
// give up at random moments — before the first byte, inside the body, as
// the response ends — all end, each either complete or cancelled, and the
// reactors are left holding no socket. Run with -race, it also checks the
// hand-over between a reactor's reads and a sender that gives up.
func TestReactorGiveUps(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = 2 * time.Millisecond; c.ITL = 2 * time.Millisecond })
	e := newTestEngine(t, srv.URL(), openai.Chat, nil)
	p := prepared(t, e, true) // 16 tokens: about 35 ms per stream
	const senders, each = 16, 12
	var mu sync.Mutex
	kinds := map[record.ErrorKind]int{}
	var wg sync.WaitGroup
	for i := range senders {
		s, err := e.NewSender()
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		wg.Go(func() {
			for j := range each {
				ctx, cancel := context.WithCancelCause(context.Background())
				if j%2 == 1 { // every other request is given up after 0–45 ms
					time.AfterFunc(time.Duration(rng.IntN(45_000))*time.Microsecond, func() { cancel(errGrace) })
				}
				var r record.Request
				s.Do(ctx, p, &r)
				cancel(nil)
				mu.Lock()
				kinds[r.ErrorKind]++
				mu.Unlock()
				if !r.OK() && r.ErrorKind != record.ErrCancelled {
					t.Errorf("request %d/%d: %s (%s)", i, j, r.ErrorKind, r.ErrorMessage)
				}
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
	if kinds[record.ErrCancelled] == 0 || kinds[""] == 0 {
		t.Errorf("outcomes %v, want both complete and cancelled requests", kinds)
	}
	t.Logf("outcomes %v", kinds)
	if len(e.pool.reactors) == 0 {
		t.Fatal("no reactor ran")
	}
	for _, rc := range e.pool.reactors {
		if n := rc.Held(); n != 0 {
			t.Errorf("a reactor still holds %d sockets", n)
		}
	}
}
