package reprise

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestWithModels: several models of one server, round-robin and random.
// The mock serves m1, m2 and m3 and refuses other names, so a request
// that went out with a model it does not serve fails: with m1 and zz,
// exactly the requests of target 1 fail, so each request named its
// target's model. Round-robin sends as many rows to each model; random
// sends each model some rows, the same ones for the same seed.
func TestWithModels(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) {
		c.TTFT, c.ITL, c.Models = time.Millisecond, 0, []string{"m1", "m2", "m3"}
	})
	run := func(models []string, strategy string, n int) []record.Request {
		t.Helper()
		o := NewOptions()
		o.URL = srv.URL()
		o.Synthetic = SyntheticLoad{ISL: 8, OSL: 2}
		o.Replay.Concurrency, o.Replay.RequestCount = 3, n
		o.Output.Dir = filepath.Join(t.TempDir(), "run")
		o.Telemetry.EndpointMetrics = false
		o.MaxErrorRate = 1
		o, err := WithModels(o, models, strategy)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(res.Summary.Targets); got != len(models) {
			t.Fatalf("summary has %d targets, want %d", got, len(models))
		}
		for i, ti := range res.Summary.Targets {
			if ti.Run.Model != models[i] {
				t.Errorf("summary target %d model %q, want %q", i, ti.Run.Model, models[i])
			}
		}
		rd, err := arrowio.Open(res.Dir)
		if err != nil {
			t.Fatal(err)
		}
		var reqs []record.Request
		for r, err := range rd.Requests() {
			if err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs, r)
		}
		return reqs
	}
	rr := make([]int, 3)
	for _, r := range run([]string{"m1", "m2", "m3"}, ModelRoundRobin, 9) {
		if !r.OK() {
			t.Errorf("round-robin: request %d failed: %s", r.RequestID, r.ErrorMessage)
		}
		rr[r.Target]++
	}
	if !slices.Equal(rr, []int{3, 3, 3}) {
		t.Errorf("round-robin: %v requests per model, want 3 each", rr)
	}
	for _, r := range run([]string{"m1", "zz"}, ModelRoundRobin, 6) {
		if r.OK() != (r.Target == 0) {
			t.Errorf("request %d to target %d: ok %v (%s); want only target 1 (model zz) to fail", r.RequestID, r.Target, r.OK(), r.ErrorMessage)
		}
	}
	count := func(reqs []record.Request) []int {
		c := make([]int, 3)
		for _, r := range reqs {
			if !r.OK() {
				t.Errorf("random: request %d failed: %s", r.RequestID, r.ErrorMessage)
			}
			c[r.Target]++
		}
		return c
	}
	a, b := count(run([]string{"m1", "m2", "m3"}, ModelRandom, 30)), count(run([]string{"m1", "m2", "m3"}, ModelRandom, 30))
	if slices.Contains(a, 0) || !slices.Equal(a, b) {
		t.Errorf("random: %v and %v requests per model; want every model some, equal for equal seeds", a, b)
	}
	if _, err := WithModels(NewOptions(), []string{"a", "b"}, "weighted"); err == nil || !strings.Contains(err.Error(), "round_robin or random") {
		t.Errorf("unknown strategy: err = %v", err)
	}
}

// TestRandomTargetUniform: the random policy's draw is uniform over n
// targets (a chi-square bound at 10⁻⁶ for 3 targets and 30 000 items).
func TestRandomTargetUniform(t *testing.T) {
	c := make([]float64, 3)
	for i := range 30000 {
		c[randomTarget(i, 3, 7)]++
	}
	chi := 0.0
	for _, x := range c {
		chi += (x - 10000) * (x - 10000) / 10000
	}
	if chi > 27.6 {
		t.Errorf("counts %v: chi² %.1f over 27.6", c, chi)
	}
}
