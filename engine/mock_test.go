package engine

import (
	"context"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// startMock starts the in-process mock server (TTFT 20 ms, ITL 5 ms
// unless mut says otherwise) for the length of the test.
func startMock(t testing.TB, mut func(*mockserver.Config)) *mockserver.Server {
	t.Helper()
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT = 20 * time.Millisecond
	cfg.ITL = 5 * time.Millisecond
	if mut != nil {
		mut(cfg)
	}
	srv, err := mockserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
