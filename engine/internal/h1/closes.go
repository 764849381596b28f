package h1

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// streamCloses learns whether the server closes the connection after every
// streamed response. llama-server does, about 0.3 ms after the last chunk,
// while advertising keep-alive; a request written on such a connection in
// that window is read by nobody, and the client cannot tell that from a
// request the server read and then reset, so it must not be re-sent. Once
// the pattern is known, streamed requests ask for Connection: close
// instead, and none is written into a closing connection.
//
// The verdict needs evidence that repeats, and stays reversible:
//
//   - Evidence of closing is a connection that ended soon (closedWindow)
//     after a complete streamed response on it: the idle check found the
//     server's FIN, the server announced Connection: close on the
//     response unasked, or the next request on it got an EOF or a reset
//     before any response byte.
//   - Evidence of keeping is a response received on a connection that had
//     carried a streamed response: the server read a second request on it.
//
// closeEvidence pieces of closing evidence in a row (none of keeping in
// between) make the verdict "closes"; so a single reset — an injected
// fault, a crash — changes nothing on a server that keeps connections,
// whose next reused stream is evidence of keeping. One piece of keeping
// evidence makes the verdict "keeps". While it is "closes", every
// probeEvery-th stream is still sent without Connection: close, so a
// server that changes its mind is noticed.
//
// Until the server is known to keep connections after streams, a
// connection rests after a streamed response before it is reused
// (Client.takeIdle): streamSettle while the verdict is open, closedWindow
// for a probe's connection while it is "closes". Meanwhile requests dial
// (only at the connection cap do they wait for a rest to end), and a
// rested connection is peeked in the background (Client.checkRested): a
// close that follows the last chunk is found there, not by a request.
// Keeping is learnt only from a response on a reused connection.
//
// It is safe for concurrent use. The per-request calls (askClose, and
// kept on a server that keeps) are one or two atomic loads.
type streamCloses struct {
	verdict atomic.Uint32 // a Verdict
	streak  atomic.Int32  // closing evidence in a row; written under mu
	mu      sync.Mutex
	probes  atomic.Uint64 // streams sent while VerdictCloses
	log     *slog.Logger
	url     string
	// settle and window are streamSettle and closedWindow (tests
	// shorten them).
	settle, window time.Duration
}

func newStreamCloses(log *slog.Logger, url string) streamCloses {
	return streamCloses{log: log, url: url, settle: streamSettle, window: closedWindow}
}

// RestAfterStream is how long a connection rests after a streamed
// response before it is reused, while the client does not know yet whether
// the server closes connections after streams ([VerdictOpen]).
// llama-server's FIN follows its last chunk by about 0.3 ms; the margin is
// for a loaded server or client.
const RestAfterStream = 20 * time.Millisecond

// Verdict is what the client has learned about the server closing the
// connection after every streamed response.
type Verdict uint32

// The verdicts.
const (
	// VerdictOpen: not known yet. A connection rests after a streamed
	// response before it is reused, and is checked in the background.
	VerdictOpen Verdict = iota
	// VerdictKeeps: the server keeps connections after streams.
	VerdictKeeps
	// VerdictCloses: the server closes the connection after every
	// stream; streamed requests ask for Connection: close.
	VerdictCloses
)

// The verdicts as stored.
const (
	closesUnknown = uint32(VerdictOpen)
	closesNo      = uint32(VerdictKeeps)
	closesYes     = uint32(VerdictCloses)
)

const (
	// closeEvidence is how many closes after complete streamed responses
	// in a row make streams ask for Connection: close.
	closeEvidence = 3
	// probeEvery: while streams ask for Connection: close, every
	// probeEvery-th one does not, to see whether the server still closes.
	probeEvery = 32
	// streamSettle is how long a connection rests after a streamed
	// response before it is reused while the verdict is open.
	streamSettle = RestAfterStream
	// closedWindow: a close found within this time after a streamed
	// response counts as closing after the response; later, it is an idle
	// timeout.
	closedWindow = time.Second
)

// rest returns how long a connection must rest after a streamed response
// before it is reused (0 once the server is known to keep connections),
// and whether a request should wait for it rather than dial (while the
// verdict is open).
func (d *streamCloses) rest() (time.Duration, bool) {
	switch d.verdict.Load() {
	case closesUnknown:
		return d.settle, true
	case closesYes:
		return d.window, false
	}
	return 0, false
}

// soon reports whether a close idle after a streamed response is soon
// enough to be evidence of closing after streams (later, it is an idle
// timeout).
func (d *streamCloses) soon(idle time.Duration) bool { return idle < d.window }

// askClose reports whether a streamed request should ask for
// Connection: close.
func (d *streamCloses) askClose() bool {
	if d.verdict.Load() != closesYes {
		return false
	}
	return d.probes.Add(1)%probeEvery != 0
}

// closed records a piece of evidence of closing after streams.
func (d *streamCloses) closed() {
	d.mu.Lock()
	n := d.streak.Add(1)
	flip := n >= closeEvidence && d.verdict.Load() != closesYes
	if flip {
		d.verdict.Store(closesYes)
	}
	d.mu.Unlock()
	if flip {
		d.log.Info("the server closed the connection after several streamed responses in a row; "+
			"streamed requests now ask for Connection: close (a few still check whether it keeps them)",
			"url", d.url, "in_a_row", n)
	}
}

// kept records a piece of evidence of keeping connections after streams:
// a response on a connection that had carried a streamed response.
func (d *streamCloses) kept() {
	if d.verdict.Load() == closesNo && d.streak.Load() == 0 {
		return
	}
	d.mu.Lock()
	was := d.verdict.Swap(closesNo)
	d.streak.Store(0)
	d.mu.Unlock()
	if was == closesYes {
		d.log.Info("the server kept a connection open after a streamed response; reusing connections for streams again",
			"url", d.url)
	}
}

// open reports whether the verdict is still open (neither "closes" nor
// "keeps").
func (d *streamCloses) open() bool { return d.verdict.Load() == closesUnknown }

// get returns the verdict.
func (d *streamCloses) get() Verdict { return Verdict(d.verdict.Load()) }
