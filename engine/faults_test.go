package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestMockServerFaults: every fault the mock server injects maps to the
// right error kind, and the sender keeps working afterwards.
func TestMockServerFaults(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = 2 * time.Millisecond; c.ITL = time.Millisecond })
	cases := []struct {
		fault   string
		stream  bool
		timeout time.Duration
		want    record.ErrorKind
	}{
		{"429", true, 0, record.ErrHTTPStatus},
		{"500", true, 0, record.ErrHTTPStatus},
		{"503", false, 0, record.ErrHTTPStatus},
		{"reset-before-headers", true, 0, record.ErrReset},
		{"reset-mid-stream", true, 0, record.ErrReset},
		{"malformed-sse", true, 0, record.ErrMalformed},
		{"error-event", true, 0, record.ErrStreamError},
		{"stall=2s", true, 300 * time.Millisecond, record.ErrTimeout},
		{"slow-headers=20ms", true, 0, record.ErrNone},
		{"", false, 0, record.ErrNone},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			cfg := NewConfig()
			cfg.BaseURL = srv.URL()
			cfg.Adapter = openai.Adapter{}
			cfg.AdapterConfig = adapter.Config{Model: "reprise-mock", Stream: c.stream, IncludeUsage: true}
			cfg.Timeout = c.timeout
			if c.fault != "" {
				cfg.Header = []adapter.Header{{Name: mockserver.FaultHeader, Value: c.fault}}
			}
			e, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			s, _ := e.NewSender()
			var r record.Request
			s.Do(context.Background(), prepared(t, e, c.stream), &r)
			if r.ErrorKind != c.want {
				t.Fatalf("kind %q (%s), want %q", r.ErrorKind, r.ErrorMessage, c.want)
			}
			if c.want != record.ErrNone && r.ErrorMessage == "" {
				t.Error("no error message")
			}
			if c.want == record.ErrTimeout && !strings.HasPrefix(r.ErrorMessage, "request timed out (--timeout)") {
				t.Errorf("timeout message %q does not name --timeout", r.ErrorMessage)
			}
			if r.EndNS < r.SentNS || r.SentNS == 0 {
				t.Errorf("timeline sent %d end %d", r.SentNS, r.EndNS)
			}
			if c.fault == "reset-mid-stream" && r.ContentEvents == 0 {
				t.Error("tokens before the reset were not kept")
			}
		})
	}
}

// TestConnectError: nothing listens → connect error, quickly.
func TestConnectError(t *testing.T) {
	e := newTestEngine(t, "http://127.0.0.1:1", openai.Chat, nil)
	s, _ := e.NewSender()
	var r record.Request
	s.Do(context.Background(), prepared(t, e, true), &r)
	if r.ErrorKind != record.ErrConnect {
		t.Errorf("kind %q (%s), want connect", r.ErrorKind, r.ErrorMessage)
	}
}

// TestCancelled: cancelling the context mid-stream records cancelled.
func TestCancelled(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT = time.Millisecond; c.ITL = 50 * time.Millisecond })
	e := newTestEngine(t, srv.URL(), openai.Chat, nil)
	s, _ := e.NewSender()
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("end of grace period")) })
	var r record.Request
	s.Do(ctx, prepared(t, e, true), &r)
	if r.ErrorKind != record.ErrCancelled {
		t.Errorf("kind %q (%s), want cancelled", r.ErrorKind, r.ErrorMessage)
	}
}
