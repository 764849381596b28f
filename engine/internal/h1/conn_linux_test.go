package h1

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/replay"
)

// tcpPair returns a client Conn (kernel stamps on) and the
// server's end of it.
func tcpPair(t *testing.T) (*rxConn, *net.TCPConn, *replay.Clock) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := (<-accepted).(*net.TCPConn)
	clock := replay.NewClock()
	tc := newRxConn(c, true)
	t.Cleanup(func() { tc.Close(); srv.Close() })
	if tc.rx == nil {
		t.Fatal("kernel receive timestamps could not be turned on")
	}
	// The kernel turns stamping on for the whole system when the first
	// socket asks, from a work queue: a segment that arrives before that
	// has no stamp. Wait for stamps to flow.
	buf := make([]byte, 8)
	for i := 0; ; i++ {
		if _, err := srv.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.Read(buf); err != nil {
			t.Fatal(err)
		}
		if tc.rxNS.Load() != 0 {
			break
		}
		if i == 100 {
			t.Fatal("no kernel receive stamps after 1 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return tc, srv, clock
}

// TestKernelStampIsArrival: a read's time is when its bytes arrived, not
// when reprise got round to reading them, and bytes that waited in the
// socket for two writes carry the later write's time (the kernel merges
// queued segments; docs/format/records.md).
func TestKernelStampIsArrival(t *testing.T) {
	tc, srv, clock := tcpPair(t)
	write := func(s string) (before, after int64) {
		_, before = clock.NowWall()
		if _, err := srv.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		_, after = clock.NowWall()
		return before, after
	}
	buf := make([]byte, 64)

	b1, a1 := write("first")
	time.Sleep(30 * time.Millisecond) // the reader is late
	n, err := tc.Read(buf)
	now, wall := clock.NowWall()
	if err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	rx := tc.rxNS.Load()
	if rx < b1 || rx > a1 {
		t.Fatalf("kernel stamp %d outside the write [%d, %d]", rx, b1, a1)
	}
	got := tc.arrival(now, wall, 0)
	if lag := now - got; lag < 30*int64(time.Millisecond) {
		t.Errorf("arrival %d is only %v before the late read: the read time leaked in", got, time.Duration(lag))
	}
	if tc.arrival(now, wall, now) != now {
		t.Error("arrival below the floor not clamped to it")
	}

	write("a")
	time.Sleep(5 * time.Millisecond)
	b2, a2 := write("b")
	time.Sleep(5 * time.Millisecond)
	n, err = tc.Read(buf)
	if err != nil || string(buf[:n]) != "ab" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if rx := tc.rxNS.Load(); rx < b2 || rx > a2 {
		t.Errorf("merged read stamped %d, want the last write's [%d, %d]", rx, b2, a2)
	}
}

// TestKernelStampReadErrors: EOF and resets look exactly as net.Conn.Read
// reports them, so closed-connection detection and error kinds hold.
func TestKernelStampReadErrors(t *testing.T) {
	tc, srv, _ := tcpPair(t)
	srv.Close()
	if _, err := tc.Read(make([]byte, 8)); err != io.EOF {
		t.Errorf("after close: %v, want io.EOF", err)
	}

	tc, srv, _ = tcpPair(t)
	_ = srv.SetLinger(0) // close sends RST
	srv.Close()
	_, err := tc.Read(make([]byte, 8))
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNRESET) || !errors.As(err, &op) || op.Op != "read" {
		t.Errorf("after reset: %#v, want a read *net.OpError wrapping ECONNRESET", err)
	}

	tc, _, _ = tcpPair(t)
	tc.Conn.Close()
	if _, err := tc.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after our close: %v, want net.ErrClosed", err)
	}
}

// TestKernelStampReadAllocs: a read with its stamp allocates nothing.
func TestKernelStampReadAllocs(t *testing.T) {
	tc, srv, _ := tcpPair(t)
	buf := make([]byte, 64)
	msg := []byte("data: x\n\n")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := srv.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(tc, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per read", allocs)
	}
}

// TestExchangeWriteFailsAtReset: exchange writes in the poller's read
// callback; when the server has reset the connection the write fails
// before the kernel takes a byte, exchange reads nothing and reports it
// as a write that reached no one (what makes Do send the request again).
func TestExchangeWriteFailsAtReset(t *testing.T) {
	tc, srv, clock := tcpPair(t)
	if err := srv.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	srv.Close() // RST
	// Wait until the reset has arrived (the peek says so).
	var b byte
	raw, err := tc.Conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		var e syscall.Errno
		raw.Control(func(fd uintptr) { _, e = peekSocket(fd, &b) })
		if e == syscall.ECONNRESET {
			break
		}
		if i == 1000 {
			t.Fatalf("peek after the server's reset: %v", e)
		}
		time.Sleep(time.Millisecond)
	}
	cl := newClient(t, "http://127.0.0.1:1", nil)
	k := cl.NewCaller()
	k.buf = make([]byte, ReadBuffer)
	c := &conn{tc: tc, c: tc, tcp: tc.Conn.(*net.TCPConn)}
	var st Stamps
	h := &recorder{}
	wrote := false
	req := chat(cl, false)
	req.Wrote = func() { wrote = true }
	n, total, read, _, err := k.exchange(context.Background(), c, req, false, h, &st, clock.Now(), false)
	if read || n != 0 || total == 0 || wrote || st.Wrote != 0 || h.headers != 0 {
		t.Errorf("read %v, %d of %d bytes written, Wrote called %v (stamp %d), %d heads; want nothing written or read", read, n, total, wrote, st.Wrote, h.headers)
	}
	if !peerClosed(err) {
		t.Errorf("error %v; want a reset or broken pipe (the request never left)", err)
	}
}

// TestHoldStampsKeepsStampingOn: while a client holds stamping on, the
// first bytes of a fresh connection, written the moment its socket asks
// for stamps, carry a kernel stamp. Without the hold, the kernel turns
// stamping on from a work queue after the socket asks and off after the
// last one closes, and about a quarter of such first reads (on an idle
// machine; more on a loaded one) were stamped only when they returned.
func TestHoldStampsKeepsStampingOn(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1", Clock: replay.NewClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.unhold == nil {
		t.Fatal("the client holds no stamping socket")
	}
	// Wait for stamping to be on; the pair closes with the subtest.
	t.Run("on", func(t *testing.T) { tcpPair(t) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	buf := make([]byte, 8)
	for i := range 40 {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		srv, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		tc := newRxConn(nc, true)
		if _, err := srv.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.Read(buf); err != nil {
			t.Fatal(err)
		}
		stamped := tc.rxNS.Load() != 0
		tc.Close()
		srv.Close()
		if !stamped {
			t.Fatalf("connection %d: its first read has no kernel stamp", i)
		}
		time.Sleep(2 * time.Millisecond) // the last stamping socket closed: the kernel may turn stamping off
	}
}
