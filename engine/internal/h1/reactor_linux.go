package h1

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reactor reads the responses of many HTTP/1.1 connections on one
// goroutine: their sockets sit in its own level-triggered epoll set, whose
// descriptor the runtime poller waits on. Each time the poller says the
// set is ready, the reactor takes every ready socket in turn, reads it
// once (recvmsg with the kernel's receive stamp) and runs the sender's
// callback on the bytes: framing, parsing, stamping, exactly what the
// sender's goroutine would have done.
//
// Why: with a goroutine per stream, each event costs a goroutine wake-up,
// a trip through the run queue and a second, empty read to learn the
// socket is drained. At 1,000 streams of 10 ms ITL on two cores those
// wake-ups queue behind each other for milliseconds; a first token read
// late enough is merged by TCP with the next one and gets the later stamp.
// One reactor per P drains a whole batch of ready sockets per wake-up,
// one read each, with nothing queued in between (design 0004).
//
// A socket is in the set only while a response is being read: added when
// the sender starts waiting, removed when the callback says the response
// is over or the sender gives up (deadline, cancellation). Level
// triggering makes that safe: bytes that arrived before the add are
// reported at once, a read that left bytes behind is reported again, and
// an EOF or reset that arrived with the last bytes is reported by the next
// wait — no readiness is ever lost between two reads.
type reactor struct {
	ep     *os.File // the epoll set, non-blocking, registered with the runtime poller
	epfd   int
	raw    syscall.RawConn
	closed atomic.Bool

	mu    sync.Mutex
	slots []*rxReader // by slot number, the epoll event's data
	free  []int32

	// The reactor goroutine's own.
	events []unix.EpollEvent
	batch  []*rxReader
	drainF func(fd uintptr) bool // rc.drain, made once
}

// newReactor starts a reactor; the error says why it could not (the
// caller then reads on the senders' goroutines).
func newReactor() (*reactor, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(fd), "reprise-reactor")
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	rc := &reactor{ep: f, epfd: fd, raw: raw, events: make([]unix.EpollEvent, 256)}
	rc.drainF = rc.drain
	go rc.run()
	return rc, nil
}

// Close stops the reactor. Call it when no response is being read; a
// later await reads on its caller's goroutine.
func (rc *reactor) close() {
	rc.closed.Store(true)
	_ = rc.ep.Close()
}

// run serves the set until it is closed: drain never ends the read, so
// RawConn.Read returns only with the poller's error for the closed file.
func (rc *reactor) run() { _ = rc.raw.Read(rc.drainF) }

// drain handles ready sockets until none is left; false: wait for the
// poller. It runs inside RawConn.Read, so a wake-up of the poller between
// two waits is never lost.
func (rc *reactor) drain(fd uintptr) bool {
	for {
		n, err := unix.EpollWait(int(fd), rc.events, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false
		}
		rc.mu.Lock()
		for _, ev := range rc.events[:n] {
			rc.batch = append(rc.batch, rc.slots[ev.Fd])
		}
		rc.mu.Unlock()
		for i, r := range rc.batch {
			if r != nil {
				r.ready()
			}
			rc.batch[i] = nil
		}
		rc.batch = rc.batch[:0]
	}
}

func (rc *reactor) add(r *rxReader) int32 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if n := len(rc.free); n > 0 {
		slot := rc.free[n-1]
		rc.free = rc.free[:n-1]
		rc.slots[slot] = r
		return slot
	}
	rc.slots = append(rc.slots, r)
	return int32(len(rc.slots) - 1)
}

func (rc *reactor) remove(slot int32) {
	rc.mu.Lock()
	rc.slots[slot] = nil
	rc.free = append(rc.free, slot)
	rc.mu.Unlock()
}

// errGaveUp is what await returns when ctx ends or the deadline passes,
// as the runtime poller would: the caller classifies it by ctx's cause.
var errGaveUp = os.ErrDeadlineExceeded

// await reads into p on the reactor until fn says the response is over,
// as loop does on the calling goroutine, and returns nil then; errGaveUp
// when ctx ends or deadline (zero: none) passes first. fn runs on the
// reactor's goroutine; everything it wrote is visible when await returns.
func (r *rxReader) await(ctx context.Context, deadline time.Time, p []byte, fn func(n int, stamp int64, errno syscall.Errno) bool) error {
	rc := r.rc
	if rc.closed.Load() {
		return r.loop(p, fn)
	}
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.fn = fn
	defer func() {
		r.iov.Base = nil // do not keep the caller's buffer reachable
		r.fn = nil
	}()
	r.wmu.Lock()
	r.slot = rc.add(r)
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: r.slot}
	if err := unix.EpollCtl(rc.epfd, unix.EPOLL_CTL_ADD, r.fd, &ev); err != nil {
		rc.remove(r.slot)
		r.wmu.Unlock()
		return r.loop(p, fn)
	}
	r.active = true
	r.wmu.Unlock()

	var timeout <-chan time.Time
	if !deadline.IsZero() {
		if r.timer == nil {
			r.timer = time.NewTimer(time.Until(deadline))
		} else {
			r.timer.Reset(time.Until(deadline))
		}
		timeout = r.timer.C
	}
	var err error
	select {
	case <-r.done:
	case <-ctx.Done():
		err = errGaveUp
	case <-timeout:
		err = errGaveUp
	}
	if timeout != nil {
		r.timer.Stop()
	}
	if err != nil {
		r.wmu.Lock()
		finished := !r.active
		if !finished {
			r.finish()
		}
		r.wmu.Unlock()
		if finished { // the response ended as we gave up: it counts
			<-r.done
			err = nil
		}
	}
	return err
}

// ready reads a socket the reactor found ready. A read that finds nothing
// (a report that went stale) is ignored.
func (r *rxReader) ready() {
	r.wmu.Lock()
	if !r.active || !r.recvOnce(uintptr(r.fd)) {
		r.wmu.Unlock()
		return
	}
	var stamp int64
	if r.errno == 0 && r.n > 0 {
		stamp = r.stamp()
	}
	if !r.fn(r.n, stamp, r.errno) && r.errno == 0 && r.n > 0 {
		r.wmu.Unlock()
		return
	}
	r.finish()
	r.wmu.Unlock()
	r.done <- struct{}{}
}

// finish takes the socket out of the reactor's set. r.wmu is held.
func (r *rxReader) finish() {
	r.active = false
	_ = unix.EpollCtl(r.rc.epfd, unix.EPOLL_CTL_DEL, r.fd, nil)
	r.rc.remove(r.slot)
}

// Held returns how many sockets rc is reading now.
func (rc *reactor) held() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, r := range rc.slots {
		if r != nil {
			n++
		}
	}
	return n
}
