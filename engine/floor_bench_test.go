package engine

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLoopbackFloor measures what the machine charges for the
// benchmarks' traffic with nothing else on top: 1,000 loopback TCP
// connections, each written 250 bytes every 10 ms by its own goroutine and
// read by another, in one process — no HTTP, no parsing, no records. Its
// CPU per event is the floor under BenchmarkTTFTError's client plus
// server, and its cores the share of the machine that traffic alone
// takes (on the 2-vCPU VM: about 18 µs and 1.8 cores at 100k events/s).
// Run with -benchtime=1x.
func BenchmarkLoopbackFloor(b *testing.B) {
	const conns, size = 1000, 250
	const gap = 10 * time.Millisecond
	for b.Loop() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		var sent, late atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				wg.Go(func() {
					defer c.Close()
					buf := make([]byte, size)
					timer := time.NewTimer(time.Hour) // one per connection, as the mock server keeps one per request
					defer timer.Stop()
					t := time.Now()
					for {
						t = t.Add(gap)
						if d := time.Until(t); d > 0 {
							timer.Reset(d)
							select {
							case <-timer.C:
							case <-stop:
								return
							}
						} else {
							late.Add(1)
						}
						if _, err := c.Write(buf); err != nil {
							return
						}
						sent.Add(1)
					}
				})
			}
		})
		var clients []net.Conn
		for range conns {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			clients = append(clients, c)
			wg.Go(func() {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
			time.Sleep(gap / conns) // spread the writers' phases
		}
		time.Sleep(500 * time.Millisecond)
		cpu0, sent0, late0, t0 := processCPU(), sent.Load(), late.Load(), time.Now()
		time.Sleep(2 * time.Second)
		cpu, events, lateN, wall := processCPU()-cpu0, sent.Load()-sent0, late.Load()-late0, time.Since(t0)
		close(stop)
		ln.Close()
		for _, c := range clients {
			c.Close()
		}
		wg.Wait()
		b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
		b.ReportMetric(float64(cpu.Microseconds())/float64(events), "cpu-µs/event")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		b.ReportMetric(float64(lateN)/float64(events), "late-fraction")
	}
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
