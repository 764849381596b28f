package engine

// HTTP/2's connection phases: the httptrace points of one attempt.

import (
	"crypto/tls"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/reprise-bench/reprise/replay"
)

// phaseTrace collects the httptrace points of one attempt.
type phaseTrace struct {
	clock               *replay.Clock
	getConn, gotConn    atomic.Int64
	dnsStart, dnsDone   atomic.Int64
	connStart, connDone atomic.Int64
	tlsStart, tlsDone   atomic.Int64
	wrote, firstByte    atomic.Int64
	reused              atomic.Bool
	trace               httptrace.ClientTrace
}

func newPhaseTrace(c *replay.Clock, cp *cancelPlan) *phaseTrace {
	p := &phaseTrace{clock: c}
	p.trace = httptrace.ClientTrace{
		GetConn: func(string) { p.getConn.Store(c.Now()) },
		GotConn: func(info httptrace.GotConnInfo) {
			p.gotConn.Store(c.Now())
			p.reused.Store(info.Reused)
		},
		DNSStart:          func(httptrace.DNSStartInfo) { p.dnsStart.Store(c.Now()) },
		DNSDone:           func(httptrace.DNSDoneInfo) { p.dnsDone.Store(c.Now()) },
		ConnectStart:      func(string, string) { p.connStart.Store(c.Now()) },
		ConnectDone:       func(string, string, error) { p.connDone.Store(c.Now()) },
		TLSHandshakeStart: func() { p.tlsStart.Store(c.Now()) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { p.tlsDone.Store(c.Now()) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			p.wrote.Store(c.Now())
			if info.Err == nil && cp != nil {
				cp.arm()
			}
		},
		GotFirstResponseByte: func() { p.firstByte.Store(c.Now()) },
	}
	return p
}
