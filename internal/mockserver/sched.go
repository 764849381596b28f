package mockserver

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// admission lets at most max requests run; the rest wait in FIFO order, as
// a server with max_num_seqs slots queues them. Safe for concurrent use.
type admission struct {
	mu      sync.Mutex
	max     int
	running int
	queue   []*waiter // FIFO; head at queue[0]
}

type waiter struct {
	ch       chan struct{}
	admitted bool // guarded by admission.mu
}

func newAdmission(max int) *admission { return &admission{max: max} }

// acquire blocks until the request may run or ctx ends. It returns false
// when ctx ended first; the caller must then not call release.
func (a *admission) acquire(ctx context.Context) bool {
	a.mu.Lock()
	if a.running < a.max && len(a.queue) == 0 {
		a.running++
		a.mu.Unlock()
		return true
	}
	w := &waiter{ch: make(chan struct{}, 1)}
	a.queue = append(a.queue, w)
	a.mu.Unlock()
	select {
	case <-w.ch:
		return true
	case <-ctx.Done():
		a.mu.Lock()
		defer a.mu.Unlock()
		if w.admitted { // admitted concurrently: give the slot back
			a.releaseLocked()
			return false
		}
		for i, q := range a.queue {
			if q == w {
				a.queue = append(a.queue[:i], a.queue[i+1:]...)
				break
			}
		}
		return false
	}
}

// release frees a slot and admits the head of the queue.
func (a *admission) release() {
	a.mu.Lock()
	a.releaseLocked()
	a.mu.Unlock()
}

func (a *admission) releaseLocked() {
	a.running--
	for a.running < a.max && len(a.queue) > 0 {
		w := a.queue[0]
		a.queue[0] = nil
		a.queue = a.queue[1:]
		w.admitted = true
		a.running++
		w.ch <- struct{}{}
	}
}

// counts returns the running and waiting requests.
func (a *admission) counts() (running, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, len(a.queue)
}

// timing is the latency model. All of it is pure arithmetic on its inputs
// so it is tested with plain numbers:
//
//	first token  = admitted + TTFT + PrefillPerToken·uncached
//	               + PrefillPerImage·images + PrefillPerAudioSecond·audio seconds + jitter
//	token k ≥ 1  = token k−1 + ITL + ITLPerRunning·(running−1) + jitter
//
// running counts the request itself, so a lone request sees exactly ITL.
// Every write waits for its absolute deadline (admitted + offset), so a late
// write never shifts the ones after it.
type timing struct {
	ttft, prefill, itl, perRunning, jitter time.Duration
	dist                                   JitterDist
	perImage, perAudioSecond               time.Duration // design 0022
}

func (t *timing) firstToken(uncached int, rng *rand.Rand) time.Duration {
	return t.jittered(t.ttft+time.Duration(uncached)*t.prefill, rng)
}

func (t *timing) interToken(running int, rng *rand.Rand) time.Duration {
	others := max(running-1, 0)
	return t.jittered(t.itl+time.Duration(others)*t.perRunning, rng)
}

func (t *timing) jittered(d time.Duration, rng *rand.Rand) time.Duration {
	if t.jitter <= 0 || rng == nil {
		return d
	}
	j := float64(t.jitter)
	switch t.dist {
	case JitterUniform:
		d += time.Duration((rng.Float64()*2 - 1) * j)
	case JitterNormal:
		d += time.Duration(rng.NormFloat64() * j)
	case JitterExponential:
		d += time.Duration(math.Min(rng.ExpFloat64()*j, float64(math.MaxInt64/4)))
	}
	return max(d, 0)
}

// mediaDelay is the latency model's extra time to first token for a
// request's media: PrefillPerImage per image and PrefillPerAudioSecond
// per second of audio.
func (t *timing) mediaDelay(ms []InputMediaLog) time.Duration {
	var d time.Duration
	for _, m := range ms {
		switch m.Kind {
		case "image":
			d += t.perImage
		case "audio":
			d += time.Duration(m.Duration.Seconds() * float64(t.perAudioSecond))
		}
	}
	return d
}
