package replay

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestPreflightVirtual(t *testing.T) {
	// Under virtual time every wake-up is exact: all zeros, and the
	// sample count follows d / period.
	synctest.Test(t, func(t *testing.T) {
		r := preflight(200*time.Millisecond, time.Millisecond, func(b time.Time) sleeper { return newPlainSleeper(b) })
		if r.Samples != 100 || r.P99 != 0 || r.SleepMax != 0 || r.Primitive != "time.Sleep" {
			t.Errorf("%+v", r)
		}
	})
}

func TestPreflightReal(t *testing.T) {
	// The real primitive on this host: only sanity (no timing assertions,
	// the machine is shared): ordered quantiles and the spin doing its job
	// at least as well as the bare sleep at the median.
	r := Preflight(50 * time.Millisecond)
	if r.Samples != 50 || r.P50 > r.P99 || r.P99 > r.Max || r.SleepP50 > r.SleepP99 || r.SleepP99 > r.SleepMax {
		t.Errorf("inconsistent: %+v", r)
	}
	if testing.Verbose() {
		t.Logf("preflight: %+v", r)
	}
}

func TestQuantiles(t *testing.T) {
	v := make([]time.Duration, 100)
	for i := range v {
		v[i] = time.Duration(100 - i)
	}
	p50, p99, mx := quantiles(v)
	if p50 != 50 || p99 != 99 || mx != 100 {
		t.Errorf("got %v %v %v", p50, p99, mx)
	}
}
