package mockserver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// rawClient is a minimal HTTP/1.1 keep-alive client on one TCP connection.
// It costs far less CPU than net/http's client, so the benchmarks measure
// the server. Not safe for concurrent use.
type rawClient struct {
	conn net.Conn
	br   *bufio.Reader
	req  []byte
}

func dialRaw(addr, path, body string) (*rawClient, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	req := "POST " + path + " HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	return &rawClient{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), req: []byte(req)}, nil
}

// do sends the request and reads the whole response. It returns the status,
// the number of transfer chunks (one per SSE event from this server) and
// the body bytes.
func (c *rawClient) do() (status, chunks, n int, err error) {
	if _, err = c.conn.Write(c.req); err != nil {
		return 0, 0, 0, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, 0, 0, err
	}
	if len(line) < 12 {
		return 0, 0, 0, fmt.Errorf("bad status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, 0, err
	}
	length, chunked := -1, false
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return status, 0, 0, err
		}
		if len(h) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(h, []byte("Content-Length: ")); ok {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
		if bytes.HasPrefix(h, []byte("Transfer-Encoding: chunked")) {
			chunked = true
		}
	}
	if !chunked {
		if length < 0 {
			return status, 0, 0, errors.New("no Content-Length")
		}
		_, err = c.br.Discard(length)
		return status, 0, length, err
	}
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return status, chunks, n, err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(h)), 16, 64)
		if err != nil {
			return status, chunks, n, fmt.Errorf("chunk size %q: %w", h, err)
		}
		if _, err := c.br.Discard(int(size) + 2); err != nil {
			return status, chunks, n, err
		}
		if size == 0 {
			return status, chunks, n, nil
		}
		chunks++
		n += int(size)
	}
}

const benchTokens = 100

var (
	benchNonStream = `{"model":"reprise-mock","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":8,"ignore_eos":true}`
	benchStream    = `{"model":"reprise-mock","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":` +
		strconv.Itoa(benchTokens) + `,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
	// role + tokens + finish + usage + [DONE]
	benchEvents = 1 + benchTokens + 3
)

// TestBenchClient checks that the benchmarks' raw client reads what the
// server sends: complete responses, one chunk per SSE event, on a reused
// connection.
func TestBenchClient(t *testing.T) {
	s := startServer(t, nil)
	for _, tc := range []struct {
		body   string
		chunks int
	}{{benchNonStream, 0}, {benchStream, benchEvents}} {
		c, err := dialRaw(s.Addr(), "/v1/chat/completions", tc.body)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			status, chunks, n, err := c.do()
			if err != nil || status != 200 || chunks != tc.chunks || n == 0 {
				t.Fatalf("raw client: status %d, %d chunks (want %d), %d bytes, %v", status, chunks, tc.chunks, n, err)
			}
		}
		c.conn.Close()
	}
	if got := len(logOf(t, s)); got != 6 {
		t.Errorf("%d requests logged, want 6", got)
	}
}

// cpuTime is the process's user + system CPU time (children excluded).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The helper-process client: the benchmarks run their load generator in a
// child process, so the parent's CPU time (getrusage RUSAGE_SELF) is the
// server's alone.
const (
	envClientAddr  = "REPRISE_MOCKSERVER_BENCH_ADDR"
	envClientBody  = "REPRISE_MOCKSERVER_BENCH_BODY"
	envClientN     = "REPRISE_MOCKSERVER_BENCH_N"
	envClientConns = "REPRISE_MOCKSERVER_BENCH_CONNS"
	envClientWant  = "REPRISE_MOCKSERVER_BENCH_CHUNKS"
)

// TestBenchClientProcess is the child process of benchServe; it does
// nothing in a normal test run.
func TestBenchClientProcess(t *testing.T) {
	addr := os.Getenv(envClientAddr)
	if addr == "" {
		t.Skip("helper process for the benchmarks")
	}
	n, _ := strconv.Atoi(os.Getenv(envClientN))
	conns, _ := strconv.Atoi(os.Getenv(envClientConns))
	want, _ := strconv.Atoi(os.Getenv(envClientWant))
	if err := runClients(addr, os.Getenv(envClientBody), n, conns, want); err != nil {
		t.Fatal(err)
	}
}

// runClients sends n requests over conns connections, closed loop.
func runClients(addr, body string, n, conns, wantChunks int) error {
	var next atomic.Int64
	errs := make(chan error, conns)
	for range conns {
		go func() {
			c, err := dialRaw(addr, "/v1/chat/completions", body)
			if err != nil {
				errs <- err
				return
			}
			defer c.conn.Close()
			for next.Add(1) <= int64(n) {
				status, chunks, _, err := c.do()
				if err != nil || status != 200 || (wantChunks >= 0 && chunks != wantChunks) || chunks == 0 && wantChunks != 0 {
					errs <- fmt.Errorf("status %d, %d chunks (want %d), %v", status, chunks, wantChunks, err)
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range conns {
		err = errors.Join(err, <-errs)
	}
	return err
}

// benchServe serves b.N requests from a client in a child process over 8
// keep-alive connections, with zero TTFT/ITL, and reports throughput and
// the server's CPU time per request and per event; 1e9/cpu-ns-per-event is
// the event rate one core sustains.
func benchServe(b *testing.B, body string, events int, coalesce bool) {
	s := startServer(b, func(c *Config) { c.KeepLog = false; c.Coalesce = coalesce })
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	cmd := exec.CommandContext(b.Context(), exe, "-test.run=^TestBenchClientProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envClientAddr+"="+s.Addr(), envClientBody+"="+body, envClientN+"="+strconv.Itoa(b.N),
		envClientConns+"=8", envClientWant+"="+strconv.Itoa(events))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("client process: %v\n%s", err, out)
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	cpu := float64((cpuTime() - cpu0).Nanoseconds())
	b.ReportMetric(float64(b.N)/secs, "req/s")
	b.ReportMetric(cpu/float64(b.N), "server-cpu-ns/op")
	if events < 0 { // coalesced: chunks are not events; count the events sent
		events = benchEvents
	}
	if events > 0 {
		b.ReportMetric(float64(b.N*events)/secs, "events/s")
		b.ReportMetric(cpu/float64(b.N*events), "server-cpu-ns/event")
	}
}

// BenchmarkNonStream: small non-streamed chat completions, closed loop.
func BenchmarkNonStream(b *testing.B) { benchServe(b, benchNonStream, 0, false) }

// BenchmarkSSE: streamed chat completions of 100 tokens (104 SSE events,
// one write and flush each), closed loop.
func BenchmarkSSE(b *testing.B) { benchServe(b, benchStream, benchEvents, false) }

// BenchmarkSSECoalesced: the same with Config.Coalesce; with zero ITL every
// event is due at once, so a response takes a few writes.
func BenchmarkSSECoalesced(b *testing.B) { benchServe(b, benchStream, -1, true) }
