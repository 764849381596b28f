package reprise

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// defaultMemoryLimit is the Go memory limit of a run whose process has
// none (GOMEMLIMIT unset, no debug.SetMemoryLimit): a long-prompt replay's
// heap is mostly garbage (prompt text and bodies), and it bounds the
// process near 250 MB of RSS.
const defaultMemoryLimit = 224 << 20

// quietGC turns the collector's proportional mode off for the length of a
// run (GOGC=off with a memory limit, the runtime's own recipe for a known
// memory budget): it then collects only when the heap nears the limit,
// instead of every few MB of allocation. Each collection stops the
// dispatcher's thread and takes a P for marking; at 10k requests/s that
// was 20–40 stalls of 0.5–5 ms in 3 s, most of the schedule lateness
// beyond 0.5 ms (BenchmarkOpenLoopNonStreaming: p99 0.43–0.76 ms with
// collections every few MB, 0.07–0.18 ms without). A GOGC the user set is
// left alone, and so is a heap already past half the limit (collecting
// by the limit alone would then run too often). undo restores both
// settings.
//
// Runs in one process (a library user's, or tests) may overlap: the first
// to start applies the settings and the last to end restores what the
// first found, so one run's undo never leaves the collector off for good
// or turns it back on under another run.
func quietGC() (undo func()) {
	quiet.Lock()
	defer quiet.Unlock()
	if quiet.runs == 0 {
		quiet.restore = quietGCFirst()
	}
	quiet.runs++
	var once sync.Once
	return func() {
		once.Do(func() {
			quiet.Lock()
			defer quiet.Unlock()
			if quiet.runs--; quiet.runs == 0 {
				quiet.restore()
				quiet.restore = nil
			}
		})
	}
}

// quiet counts the runs inside quietGC.
var quiet struct {
	sync.Mutex
	runs    int
	restore func()
}

// quietGCFirst applies quietGC's settings and returns what restores them.
func quietGCFirst() (undo func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	limit := debug.SetMemoryLimit(-1)
	setLimit := limit == math.MaxInt64
	if setLimit {
		limit = defaultMemoryLimit
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	if live[0].Value.Kind() == metrics.KindUint64 && live[0].Value.Uint64() > uint64(limit)/2 {
		return func() {}
	}
	if setLimit {
		debug.SetMemoryLimit(limit)
	}
	old := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(old)
		if setLimit {
			debug.SetMemoryLimit(math.MaxInt64)
		}
	}
}
