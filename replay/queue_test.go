package replay

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRingFIFO(t *testing.T) {
	r := newRing[int32](3) // rounds up to 4
	for i := range int32(4) {
		if !r.push(i) {
			t.Fatalf("push %d failed", i)
		}
	}
	if r.push(9) {
		t.Fatal("push into a full ring succeeded")
	}
	for i := range int32(4) {
		if v, ok := r.pop(); !ok || v != i {
			t.Fatalf("pop = %d, %v; want %d", v, ok, i)
		}
	}
	if _, ok := r.pop(); ok {
		t.Fatal("pop from an empty ring succeeded")
	}
}

// TestRingHammer releases P producers and P consumers together; each
// producer pushes N distinct values. Every value must come out exactly
// once. Run with -race.
func TestRingHammer(t *testing.T) {
	const P = 8
	n := 20000
	if testing.Short() {
		n = 2000
	}
	r := newRing[int32](16) // small: producers meet a full ring often
	var start, done sync.WaitGroup
	start.Add(1)
	seen := make([][]int32, P)
	var consumed sync.WaitGroup
	total := P * n
	var mu sync.Mutex
	count := 0
	for p := range P {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			for i := range n {
				v := int32(p*n + i)
				for !r.push(v) {
					runtime.Gosched()
				}
			}
		}()
		consumed.Add(1)
		go func() {
			defer consumed.Done()
			start.Wait()
			for {
				mu.Lock()
				if count == total {
					mu.Unlock()
					return
				}
				mu.Unlock()
				v, ok := r.pop()
				if !ok {
					runtime.Gosched()
					continue
				}
				seen[p] = append(seen[p], v)
				mu.Lock()
				count++
				mu.Unlock()
			}
		}()
	}
	start.Done()
	done.Wait()
	consumed.Wait()
	got := make([]bool, total)
	for _, vs := range seen {
		for _, v := range vs {
			if got[v] {
				t.Fatalf("value %d popped twice", v)
			}
			got[v] = true
		}
	}
	for v, ok := range got {
		if !ok {
			t.Fatalf("value %d lost", v)
		}
	}
}

// TestHandoffHammer drives the real hand-off (idle ring, sender mailbox,
// wake token, completion) from the dispatcher side as fast as it can with
// many senders, and checks every job ran exactly once on the sender it
// was given to. Run with -race.
func TestHandoffHammer(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	cfg := NewConfig()
	cfg.RequestRate = 1
	cfg.RequestCount = n
	cfg.Senders = 8
	p, err := NewPlan(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := make([]int32, n)
	var bad sync.Once
	h := HandlerFunc(func(_ context.Context, j *Job) {
		if j.Sender < 0 || j.Sender >= 8 {
			bad.Do(func() { t.Errorf("job %d on sender %d", j.ID, j.Sender) })
		}
		ran[j.Item]++ // distinct items: no two senders share an index
	})
	r := newRunner(p, h, newPlainSleeper(time.Now()), nil, 0, t.Context())
	r.startSenders()
	for i := range n {
		for res := r.fire(int32(i), r.sl.now(), 0, 0); res != fired; res = r.fire(int32(i), r.sl.now(), 0, 0) {
			if res != blocked {
				t.Fatalf("fire %d = %d", i, res)
			}
			runtime.Gosched() // every sender busy: the dispatcher would nap
		}
	}
	for r.outstanding.Load() > 0 {
		runtime.Gosched()
	}
	r.stopSenders()
	for i, c := range ran {
		if c != 1 {
			t.Fatalf("item %d ran %d times", i, c)
		}
	}
	if got := r.st.count.Load() + r.st.warmup.Load(); got != int64(n) {
		t.Errorf("recorded %d jobs, want %d", got, n)
	}
}

func TestIdleStackLIFO(t *testing.T) {
	s := newIdleStack(4)
	if _, ok := s.pop(); ok {
		t.Fatal("pop from an empty stack succeeded")
	}
	for i := range int32(4) {
		s.push(i)
	}
	for want := int32(3); want >= 0; want-- {
		if v, ok := s.pop(); !ok || v != want {
			t.Fatalf("pop = %d, %v; want %d", v, ok, want)
		}
	}
	s.push(2)
	s.push(0)
	if v, _ := s.pop(); v != 0 {
		t.Fatalf("pop = %d after pushing 2 then 0, want the last one", v)
	}
}

// TestIdleStackHammer: one popper hands ids to workers that push them back
// from their own goroutines, as senders do; an id is never popped while a
// worker still holds it, and every id comes home exactly once.
func TestIdleStackHammer(t *testing.T) {
	const n, rounds = 64, 20000
	s := newIdleStack(n)
	var held [n]atomic.Bool // true from pop until the worker pushes it back
	for i := range int32(n) {
		s.push(i)
	}
	work := make(chan int32, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				held[id].Store(false)
				s.push(id)
			}
		}()
	}
	for range rounds {
		id, ok := s.pop()
		if !ok {
			runtime.Gosched()
			continue
		}
		if !held[id].CompareAndSwap(false, true) {
			t.Fatalf("id %d popped while a worker holds it", id)
		}
		work <- id
	}
	close(work)
	wg.Wait()
	seen := map[int32]bool{}
	for {
		id, ok := s.pop()
		if !ok {
			break
		}
		if seen[id] {
			t.Fatalf("id %d twice in the stack", id)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Fatalf("%d ids came home, want %d", len(seen), n)
	}
}
