package h1

import (
	"context"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxReader reads a TCP socket with recvmsg(2) and SO_TIMESTAMPNS, so every
// read also says when the kernel received its last segment. That time is
// what a response event's timestamp should be: it does not move when
// reprise is descheduled between the packet's arrival and the read, which
// on a saturated client (a thousand streams on two cores) is most of the
// timing error of a user-space stamp. The kernel stamps a segment as it
// enters the receive path (for loopback: in the sender's write), on the
// real-time clock.
//
// The read path is net.Conn.Read's, one system call swapped: the runtime
// poller waits for readiness (RawConn.Read), the read is recvmsg with a
// preallocated header, and nothing allocates.
type rxReader struct {
	raw   syscall.RawConn
	recv  func(fd uintptr) bool // r.recvOnce
	msg   unix.Msghdr
	iov   unix.Iovec
	oob   [64]byte
	n     int // result of the last recvOnce
	errno syscall.Errno

	// loop's state: its callback, made once, and the caller's.
	loopRecv func(fd uintptr) bool // r.loopStep
	fn       func(n int, stamp int64, errno syscall.Errno) bool

	// exchange's state: its callback, made once; the request to write
	// (nil once written or given up), what the write did, and the
	// caller's "written whole".
	exchRecv func(fd uintptr) bool // r.exchangeStep
	w        []byte
	wn       int
	werr     syscall.Errno
	wrote    func()

	// await's state (the reactor, below); rc nil: reads stay on the
	// sender's goroutine. fd is the socket's, used only while the
	// connection is open and a response is being read.
	rc     *reactor
	fd     int
	wmu    sync.Mutex // between the reactor's reads and await giving up
	active bool       // in rc's set
	slot   int32
	done   chan struct{} // the reactor's "response over", buffered
	timer  *time.Timer
}

// holdStamps keeps the kernel's receive stamping on until the returned
// function is called. Linux turns stamping on for the whole system when
// the first socket asks, and off when the last one closes, each time from
// a work queue: a segment that arrives before that work has run carries
// no stamp, and its read is stamped when it returns. When nothing else
// held stamping on, that was a quarter of fresh loopback connections
// whose first bytes came right after their socket asked (more on a
// loaded machine), and any response soon after every connection closed. An unbound UDP socket that asks for stamps, opened with the
// client, keeps stamping on across connection churn and gives the work
// queue the time before the first request to run. nil when the socket
// can't be had (stamps then work as before).
func holdStamps() func() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) != nil {
		unix.Close(fd)
		return nil
	}
	return func() { unix.Close(fd) }
}

// newRxReader turns on receive timestamps for c; nil when it can't.
func newRxReader(c *net.TCPConn) *rxReader {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	sock := -1
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		sock = int(fd)
	}); err != nil || serr != nil {
		return nil
	}
	r := &rxReader{raw: raw, fd: sock}
	r.recv = r.recvOnce
	r.loopRecv = r.loopStep
	r.exchRecv = r.exchangeStep
	r.msg.Iov = &r.iov
	r.msg.SetIovlen(1)
	return r
}

// read reads into p like net.Conn.Read and returns the receive stamp (Unix
// ns, real-time clock; 0 when the kernel gave none). err is io.EOF at the
// end of the stream, else a syscall error or the poller's (closed,
// deadline) for the caller to wrap.
func (r *rxReader) read(p []byte) (n int, stamp int64, err error) {
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	perr := r.raw.Read(r.recv)
	r.iov.Base = nil // do not keep the caller's buffer reachable
	switch {
	case perr != nil:
		return 0, 0, perr
	case r.errno != 0:
		return 0, 0, os.NewSyscallError("recvmsg", r.errno)
	case r.n == 0:
		return 0, 0, io.EOF
	}
	return r.n, r.stamp(), nil
}

// recvOnce is the RawConn.Read callback (a method value made once, so a
// read allocates nothing): one recvmsg, false to wait for readiness.
func (r *rxReader) recvOnce(fd uintptr) bool {
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	r.msg.Flags = 0
	for {
		m, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0)
		if e == syscall.EINTR {
			continue
		}
		r.n, r.errno = int(m), e
		if e == 0 {
			raceIOSync(fd)
		}
		return e != syscall.EAGAIN
	}
}

// useReactor makes await read on rc.
func (r *rxReader) useReactor(rc *reactor) {
	r.rc = rc
	r.done = make(chan struct{}, 1)
}

// stamp finds SCM_TIMESTAMPNS among the control messages of the last read.
func (r *rxReader) stamp() int64 {
	end := int(r.msg.Controllen)
	hdr := unix.CmsgLen(0)
	for off := 0; off+hdr <= end; {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&r.oob[off]))
		l := int(h.Len)
		if l < hdr || off+l > end {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && l >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&r.oob[off+hdr]))
			return ts.Nano()
		}
		off += unix.CmsgSpace(l - hdr)
	}
	return 0
}

// loop reads into p until fn says the response is over: fn gets each
// read's byte count (0 at the end of the stream), receive stamp and
// errno. It reads until the socket says EAGAIN, then waits for the
// poller, all inside one RawConn.Read.
//
// Waiting right after a short read would save the EAGAIN read (about 5 %
// of the client's CPU at 100k events/s), but it can hang: when the
// server's last bytes and its FIN (or RST) arrive together, one readiness
// announces both, recvmsg returns the bytes and consumes the FIN
// silently, and no readiness is left for the EOF the next read would see.
func (r *rxReader) loop(p []byte, fn func(n int, stamp int64, errno syscall.Errno) bool) error {
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.fn = fn
	err := r.raw.Read(r.loopRecv)
	r.iov.Base = nil // do not keep the caller's buffer reachable
	r.fn = nil
	return err
}

func (r *rxReader) loopStep(fd uintptr) bool {
	for {
		if !r.recvOnce(fd) {
			return false // EAGAIN: wait for readiness
		}
		var stamp int64
		if r.errno == 0 && r.n > 0 {
			stamp = r.stamp()
		}
		if r.fn(r.n, stamp, r.errno) || r.errno != 0 || r.n == 0 {
			return true
		}
	}
}

// exchange writes w, a whole request, and then reads its response into p
// like loop, all inside one RawConn.Read, so that the first read waits
// for the response instead of finding nothing. RawConn.Read clears the
// poller's readiness of the socket before it calls back, and the write is
// in the callback: the response can only arrive after it, so its
// arrival is never missed (a read that waits first outside RawConn.Read
// could hang: readiness that came before the clear is gone). That saves
// the recvmsg that returned EAGAIN right after every write. wrote is
// called once the kernel has taken all of w; it must not block.
//
// The write is one write(2) on the non-blocking socket (syscall.Write,
// which gives the race detector its write-to-read edge as net.Conn.Write
// does). When it takes less than all of w, or fails, exchange returns at
// once with written < len(w) and the write's errno (0 for a short
// write, EAGAIN when it took nothing), reading nothing: the caller writes
// the rest, or handles the failure, as before. Otherwise written is
// len(w) and err is loop's.
func (r *rxReader) exchange(w, p []byte, wrote func(), fn func(n int, stamp int64, errno syscall.Errno) bool) (written int, werr syscall.Errno, err error) {
	r.iov.Base = &p[0]
	r.iov.SetLen(len(p))
	r.fn, r.w, r.wn, r.werr, r.wrote = fn, w, 0, 0, wrote
	err = r.raw.Read(r.exchRecv)
	r.iov.Base = nil // do not keep the caller's buffer reachable
	r.fn, r.wrote = nil, nil
	if r.w != nil { // never called back: the poller refused (closed)
		r.w = nil
		return 0, 0, err
	}
	return r.wn, r.werr, err
}

func (r *rxReader) exchangeStep(fd uintptr) bool {
	if w := r.w; w != nil {
		r.w = nil
		n, err := syscall.Write(int(fd), w)
		for err == syscall.EINTR {
			n, err = syscall.Write(int(fd), w)
		}
		r.wn = max(n, 0)
		if err != nil {
			r.werr = syscall.EIO
			if e, ok := err.(syscall.Errno); ok {
				r.werr = e
			}
			return true
		}
		if n < len(w) {
			return true
		}
		r.wrote()
		return false // wait for the response
	}
	return r.loopStep(fd)
}

// peek reports, without blocking or consuming, whether the socket has
// been closed by the peer (EOF), has unread bytes, or neither (EAGAIN).
func peekSocket(fd uintptr, b *byte) (n int, errno syscall.Errno) {
	m, _, e := unix.Syscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(b)), 1,
		unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	return int(m), e
}

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
