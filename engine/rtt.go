package engine

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"
)

// Defaults of [StartRTTProbe].
const (
	// DefaultRTTProbeInterval is the time between two probes (AIPerf's
	// --network-latency-ping-interval default).
	DefaultRTTProbeInterval = time.Second
	// MinRTTSamples is the fewest successful probes a stopped probe has:
	// Stop probes until it has them (a run shorter than that many
	// intervals), at most twice as many attempts.
	MinRTTSamples = 5
	// rttProbeTimeout bounds one probe's handshake.
	rttProbeTimeout = 5 * time.Second
)

// RTTProbe measures the network round trip to a server while it runs:
// every interval it opens a TCP connection to the server's host and port
// and closes it at once; the handshake is one round trip with no server
// work in it (AIPerf's --network-latency-automatic). It is safe for
// concurrent use.
type RTTProbe struct {
	addr     string
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}

	mu      sync.Mutex
	samples []time.Duration
	failed  int
}

// StartRTTProbe starts probing the server of baseURL (an http:// or
// https:// URL; the port defaults to the scheme's) every interval (0:
// DefaultRTTProbeInterval), the first at once, until ctx ends or Stop.
// dial overrides the dialer (nil: net.Dialer).
func StartRTTProbe(ctx context.Context, baseURL string, interval time.Duration, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*RTTProbe, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("network latency probe: URL %q: want http://HOST[:PORT]", baseURL)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if interval <= 0 {
		interval = DefaultRTTProbeInterval
	}
	if dial == nil {
		d := &net.Dialer{}
		dial = d.DialContext
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &RTTProbe{addr: net.JoinHostPort(u.Hostname(), port), dial: dial, interval: interval, cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p, nil
}

func (p *RTTProbe) loop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probe measures one handshake and keeps its time, or counts a failure.
func (p *RTTProbe) probe(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, rttProbeTimeout)
	defer cancel()
	t0 := time.Now()
	c, err := p.dial(ctx, "tcp", p.addr)
	rtt := time.Since(t0)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if parent.Err() == nil {
			p.failed++ // not cut short by Stop
		}
		return
	}
	_ = c.Close()
	p.samples = append(p.samples, rtt)
}

// Stop ends the probing and returns the handshake times measured, in
// order, and how many probes failed. It first probes until there are
// MinRTTSamples (at most 2 × MinRTTSamples more attempts, while ctx
// lasts). The caller owns the slice.
func (p *RTTProbe) Stop(ctx context.Context) (samples []time.Duration, failed int) {
	p.cancel()
	<-p.done
	for range 2 * MinRTTSamples {
		p.mu.Lock()
		n := len(p.samples)
		p.mu.Unlock()
		if n >= MinRTTSamples || ctx.Err() != nil {
			break
		}
		p.probe(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.samples...), p.failed
}
