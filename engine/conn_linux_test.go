package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// slowParse wraps an adapter so that its first Parse tells parsing and
// then takes 40 ms: the sender reads the next event that much late, as on
// a saturated client.
type slowParse struct {
	adapter.Adapter
	parsing chan struct{}
}

func (a slowParse) NewInstance(cfg *adapter.Config) (adapter.Instance, error) {
	in, err := a.Adapter.NewInstance(cfg)
	return &slowInstance{Instance: in, parsing: a.parsing}, err
}

type slowInstance struct {
	adapter.Instance
	parsing chan struct{}
	slept   bool
}

func (s *slowInstance) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	if !s.slept {
		s.slept = true
		s.parsing <- struct{}{}
		time.Sleep(40 * time.Millisecond)
	}
	return s.Instance.Parse(ctx, b, dst)
}

// TestSlowClientStampsArrival: the server writes token 1, and token 2 as
// soon as the client starts a 40 ms parse of token 1, so the client reads
// token 2 about 40 ms after it arrived. Token 2's time is its arrival and
// the lag is recorded; with --no-kernel-timestamps the lag is in the time.
func TestSlowClientStampsArrival(t *testing.T) {
	var clock *replay.Clock
	parsing := make(chan struct{}, 1)
	var before, after int64 // token 2's write
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, tok := range []string{"a", "b"} {
			if i > 0 {
				<-parsing
				before = clock.Now()
			}
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		after = clock.Now()
		time.Sleep(100 * time.Millisecond) // the end comes in a later read
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, kernel := range []bool{true, false} {
		cfg := NewConfig()
		cfg.BaseURL = srv.URL
		cfg.Adapter = slowParse{openai.Adapter{Endpoint: openai.Chat}, parsing}
		cfg.AdapterConfig = adapter.Config{Model: "m", Stream: true}
		cfg.NoKernelStamps = !kernel
		e, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clock = e.Clock()
		s, err := e.NewSender()
		if err != nil {
			t.Fatal(err)
		}
		var r record.Request
		s.Do(context.Background(), prepared(t, e, true), &r)
		e.Close()
		if !r.OK() || r.ContentEvents != 2 {
			t.Fatalf("kernel=%v: %s %s, %d content events", kernel, r.ErrorKind, r.ErrorMessage, r.ContentEvents)
		}
		if kernel {
			// Causal bounds: the kernel stamps the segment inside the write.
			if r.LastTokenNS < before || r.LastTokenNS > after {
				t.Errorf("token 2 stamped %v after its write began (written in %v): not its arrival",
					time.Duration(r.LastTokenNS-before), time.Duration(after-before))
			}
			if r.ReadLagNS < int64(30*time.Millisecond) {
				t.Errorf("read lag %v, want the ~40 ms the parse held the reader", time.Duration(r.ReadLagNS))
			}
		} else if late := r.LastTokenNS - after; late < int64(30*time.Millisecond) || r.ReadLagNS != 0 {
			t.Errorf("without kernel stamps token 2 is %v after its write, read lag %v; want ≥ 30 ms and 0",
				time.Duration(late), time.Duration(r.ReadLagNS))
		}
	}
}
