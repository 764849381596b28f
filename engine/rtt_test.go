package engine

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestRTTProbe: a probe of a listening server has at least MinRTTSamples
// handshakes when stopped, however short the run (an hour's interval:
// the first probe, then the top-up), and the server saw each; a server
// that refuses every dial gives no sample and counts the failures (the
// top-up's, and the first probe's unless Stop came first).
func TestRTTProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	ctx := context.Background()
	p, err := StartRTTProbe(ctx, "http://"+ln.Addr().String()+"/v1", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	samples, failed := p.Stop(ctx)
	if len(samples) != MinRTTSamples || failed != 0 {
		t.Fatalf("%d samples, %d failed; want %d, 0", len(samples), failed, MinRTTSamples)
	}
	for i, s := range samples {
		if s <= 0 {
			t.Errorf("sample %d: %v", i, s)
		}
		<-accepted // the server saw every handshake
	}

	refuse := func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("refused") }
	p, err = StartRTTProbe(ctx, "http://example.invalid", time.Hour, refuse)
	if err != nil {
		t.Fatal(err)
	}
	samples, failed = p.Stop(ctx)
	// The top-up's attempts, and the first probe unless Stop cut it short.
	if len(samples) != 0 || failed < 2*MinRTTSamples || failed > 2*MinRTTSamples+1 {
		t.Errorf("refusing server: %d samples, %d failed; want 0, %d or %d", len(samples), failed, 2*MinRTTSamples, 2*MinRTTSamples+1)
	}
	if _, err := StartRTTProbe(ctx, "not a url", 0, nil); err == nil {
		t.Error("a URL without a host was taken")
	}
}
