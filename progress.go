package reprise

import (
	"fmt"
	"io"
	"math/bits"
	"sync/atomic"
	"time"
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

// progress counts live and prints a status line.
type progress struct {
	sent, done, errors, inflight atomic.Int64
	lateness, ttft               hist
	planned                      int64 // 0 unknown
	start                        time.Time
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

// run prints the line every interval until stop is closed: in place on a
// terminal, as plain lines otherwise.
func (p *progress) run(w io.Writer, tty bool, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	every := 5 * time.Second
	if tty {
		every = 250 * time.Millisecond
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
