package reprise

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestQuietGC: during a run the collector is triggered by the memory
// limit alone (defaultMemoryLimit when the process had none), and both
// settings come back afterwards; a GOGC the user set is left alone.
func TestQuietGC(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set for the test process")
	}
	pct0 := debug.SetGCPercent(100)
	lim0 := debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(pct0); debug.SetMemoryLimit(lim0) }()

	undo := quietGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent during the run = %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != defaultMemoryLimit {
		t.Errorf("memory limit during the run = %d, want %d", l, defaultMemoryLimit)
	}
	undo()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GC percent after = %d, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit after = %d, want none", l)
	}

	// A limit the process set is kept, and used.
	debug.SetMemoryLimit(1 << 30)
	undo = quietGC()
	if l := debug.SetMemoryLimit(-1); l != 1<<30 {
		t.Errorf("memory limit during the run = %d, want the process's 1 GiB", l)
	}
	undo()
	if l := debug.SetMemoryLimit(-1); l != 1<<30 {
		t.Errorf("memory limit after = %d, want the process's 1 GiB", l)
	}

	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200)
	quietGC()()
	if p := debug.SetGCPercent(-1); p != 200 {
		t.Errorf("with GOGC=200 set, GC percent = %d, want 200 untouched", p)
	}
}

// TestQuietGCOverlappingRuns: runs that overlap in one process leave the
// collector off until the last ends, whichever ends first, and then
// restore what was there before the first.
func TestQuietGCOverlappingRuns(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set for the test process")
	}
	pct0 := debug.SetGCPercent(100)
	lim0 := debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(pct0); debug.SetMemoryLimit(lim0) }()
	gcPercent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	for _, firstEndsFirst := range []bool{true, false} {
		a := quietGC()
		b := quietGC()
		first, second := a, b
		if !firstEndsFirst {
			first, second = b, a
		}
		first()
		first() // an undo called twice counts once
		if p := gcPercent(); p != -1 {
			t.Fatalf("one of two runs ended: GC percent = %d, want -1 (off) for the other", p)
		}
		second()
		if p := gcPercent(); p != 100 {
			t.Fatalf("both runs ended: GC percent = %d, want 100 restored", p)
		}
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Fatalf("both runs ended: memory limit = %d, want none", l)
		}
	}
}
