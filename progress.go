package reprise

import (
	"fmt"
	"io"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
)

// hist is a lock-free log-linear histogram of non-negative int64 values
// (32 sub-buckets per power of two, ≈3 % resolution) for live progress.
type hist struct {
	b [60 * 32]atomic.Uint64
	n atomic.Uint64
}

func histIndex(v uint64) int {
	if v < 64 {
		return int(v)
	}
	e := bits.Len64(v) - 6
	return e*32 + int(v>>e)
}

func histLow(i int) uint64 {
	if i < 64 {
		return uint64(i)
	}
	e := i/32 - 1
	m := uint64(i%32 + 32)
	return m << e
}

func (h *hist) add(v int64) {
	if v < 0 {
		v = 0
	}
	h.b[histIndex(uint64(v))].Add(1)
	h.n.Add(1)
}

// quantile returns the lower bound of the bucket holding quantile q.
func (h *hist) quantile(q float64) int64 {
	n := h.n.Load()
	if n == 0 {
		return -1
	}
	rank := uint64(q*float64(n-1)) + 1
	var c uint64
	for i := range h.b {
		c += h.b[i].Load()
		if c >= rank {
			return int64(histLow(i))
		}
	}
	return int64(histLow(len(h.b) - 1))
}

// copyTo copies h's buckets into dst, which must hold len(h.b) values,
// and returns their total. Each bucket is read once, atomically; buckets
// added to while it runs may or may not be in the copy.
func (h *hist) copyTo(dst []uint64) uint64 {
	var n uint64
	for i := range h.b {
		v := h.b[i].Load()
		dst[i] = v
		n += v
	}
	return n
}

// histBuckets is the number of buckets of a [hist].
const histBuckets = len(hist{}.b)

// progress counts live what the progress line and the dashboard show.
// Every field is updated on the send path with atomic adds only
// (runner.send); readers load them without locks.
type progress struct {
	sent, done, errors, inflight atomic.Int64
	lateness, ttft               hist
	// The profile phase's TTFO, ITL, request latency (E2E) and read lag,
	// and the output tokens of the requests that ended.
	ttfo, itl, e2e, readLag hist
	outTokens               atomic.Int64
	// kinds counts failed requests by error kind (errorKinds' order).
	kinds [len(errorKinds)]atomic.Int64
	// maxIntended is the latest intended time (run clock, Unix ns) of a
	// request sent so far: how far the schedule has got.
	maxIntended atomic.Int64
	// firstIntended is the intended time of the first request sent.
	firstIntended atomic.Int64
	planned       int64 // 0 unknown
	start         time.Time
}

// newProgress is the progress of a run of plan, starting now.
func newProgress(plan *replay.Plan) *progress {
	return &progress{planned: int64(plan.Requests()), start: time.Now()}
}

// errorKinds are the error kinds progress counts, in display order.
var errorKinds = [...]record.ErrorKind{record.ErrHTTPStatus, record.ErrConnect, record.ErrReset, record.ErrTimeout,
	record.ErrStreamError, record.ErrMalformed, record.ErrNoContent, record.ErrAdapter, record.ErrCancelled,
	record.ErrBuild, record.ErrNotDelivered, record.ErrTooLarge}

// failed counts a failed request of kind k (an unknown kind counts in no
// kind, only in errors).
func (p *progress) failed(k record.ErrorKind) {
	p.errors.Add(1)
	for i := range errorKinds {
		if errorKinds[i] == k {
			p.kinds[i].Add(1)
			return
		}
	}
}

// ended counts r, a request that ended, in the live quantiles and tokens.
func (p *progress) ended(r *record.Request) {
	if !r.OK() {
		p.failed(r.ErrorKind)
	}
	if r.Phase != record.PhaseProfile {
		return
	}
	p.lateness.add(r.LatenessNS)
	if r.TTFTNS > 0 {
		p.ttft.add(r.TTFTNS)
	}
	if !r.OK() {
		return
	}
	if r.TTFONS > 0 {
		p.ttfo.add(r.TTFONS)
	}
	if r.ITLNS > 0 {
		p.itl.add(int64(r.ITLNS))
	}
	if r.E2ENS > 0 {
		p.e2e.add(r.E2ENS)
	}
	if r.ReadLagNS > 0 {
		p.readLag.add(r.ReadLagNS)
	}
	p.outTokens.Add(r.OutputLength())
}

// intended records that a request intended at ns (run clock) was sent.
func (p *progress) intended(ns int64) {
	if p.firstIntended.Load() == 0 {
		p.firstIntended.CompareAndSwap(0, ns)
	}
	for {
		m := p.maxIntended.Load()
		if ns <= m || p.maxIntended.CompareAndSwap(m, ns) {
			return
		}
	}
}

func (p *progress) line() string { return p.lineAt(time.Since(p.start)) }

// lineAt is the status line el after the start. Once every planned
// request is sent, what is left is the requests in flight, whose end no
// rate predicts: the line says so instead of an ETA.
func (p *progress) lineAt(el time.Duration) string {
	done, sent, inflight := p.done.Load(), p.sent.Load(), p.inflight.Load()
	s := fmt.Sprintf("sent %d  done %d  in flight %d  errors %d", sent, done, inflight, p.errors.Load())
	if q := p.lateness.quantile(0.99); q >= 0 {
		s += fmt.Sprintf("  lateness p99 %s", fmtDur(q))
	}
	if q := p.ttft.quantile(0.5); q >= 0 {
		s += fmt.Sprintf("  TTFT p50 %s", fmtDur(q))
	}
	if p.planned > 0 {
		s += fmt.Sprintf("  %d%%", done*100/p.planned)
		switch {
		case sent >= p.planned && done < p.planned:
			s += fmt.Sprintf("  sending done, %d in flight", inflight)
		case done > 0 && done < p.planned:
			eta := time.Duration(float64(el) / float64(done) * float64(p.planned-done))
			s += "  ETA " + eta.Round(time.Second).String()
		}
	}
	return s + "  elapsed " + el.Round(time.Second).String()
}

func fmtDur(ns int64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%dns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.0fµs", float64(ns)/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.1fms", float64(ns)/1e6)
	default:
		return fmt.Sprintf("%.2fs", float64(ns)/1e9)
	}
}

// run prints the line every interval (0: every 5 s, or 250 ms on a
// terminal) until stop is closed: in place on a terminal, as plain lines
// otherwise.
func (p *progress) run(w io.Writer, tty bool, every time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	switch {
	case every > 0:
	case tty:
		every = 250 * time.Millisecond
	default:
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			if tty {
				fmt.Fprintf(w, "\r\033[K%s\n", p.line())
			}
			return
		case <-t.C:
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", p.line())
			} else {
				fmt.Fprintln(w, p.line())
			}
		}
	}
}
