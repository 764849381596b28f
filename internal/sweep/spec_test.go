package sweep

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/replay"
)

// TestConfigure checks how a Spec becomes a Config: a single value sets
// the base, a list is an axis, a search starts from the single value of
// its setting, and the problems are reported together.
func TestConfigure(t *testing.T) {
	c := NewConfig()
	if err := c.Configure(Spec{Settings: map[string]string{ISL: "512", RequestRate: "1,2,4"}, Profile: ProfileSweep{Type: SweepGrid}}); err != nil {
		t.Fatal(err)
	}
	if c.Base.Synthetic.ISL != 512 || len(c.Axes) != 1 || c.Axes[0].Name != RequestRate || c.Find != nil {
		t.Errorf("grid: ISL %v, axes %+v, find %+v", c.Base.Synthetic.ISL, c.Axes, c.Find)
	}

	c = NewConfig()
	c.Base.Goodput = "ttft:250"
	start := 0.0
	err := c.Configure(Spec{Settings: map[string]string{RequestRate: "8"}, Find: FindSpec{Goal: "max-rate", Precision: 0.05, MaxProbes: 9}})
	if err != nil {
		t.Fatal(err)
	}
	if f := c.Find; f == nil || f.Setting != RequestRate || f.Start != 8 || f.Precision != 0.05 || f.MaxProbes != 9 || f.Floor != DefaultFloor(RequestRate, 8) {
		t.Errorf("find: %+v", c.Find)
	}
	if c.Base.Replay.Mode != replay.ModeRate {
		t.Errorf("a rate search's mode %q, want %q", c.Base.Replay.Mode, replay.ModeRate)
	}
	c = NewConfig()
	c.Base.Goodput = "ttft:250"
	if err := c.Configure(Spec{Find: FindSpec{Goal: "max-concurrency", Start: &start}}); err != nil || c.Find.Start != 0 {
		t.Errorf("an explicit start: %v, %+v", err, c.Find)
	}

	c = NewConfig()
	c.Stop.SLOFailures = -1
	err = c.Configure(Spec{Settings: map[string]string{Concurrency: "1,2"}, Find: FindSpec{Goal: "max-latency"}})
	for _, want := range []string{"--stop-slo-failures -1", `--find "max-latency"`, "--find needs SLOs", "searches one setting"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
	if err := newConfig().Configure(Spec{Profile: ProfileSweep{Type: SweepGrid}}); err == nil || !strings.Contains(err.Error(), "nothing to sweep") {
		t.Errorf("nothing: %v", err)
	}
}

// TestConfigureProfile checks the stimulus names of AIPerf's artifact
// directory and the repeated sweep's one run per point.
func TestConfigureProfile(t *testing.T) {
	c := NewConfig()
	c.Runs.Runs = 3
	stim, err := c.ConfigureProfile(ProfilePlan{Sweep: ProfileSweep{Lists: []Axis{{Name: Concurrency, Spec: "1,2", Values: []float64{1, 2}}},
		Trials: 3}, SweepMode: "repeated"})
	if err != nil || stim != "concurrency_sweep" || c.Runs.Runs != 1 || len(c.Points) == 0 {
		t.Errorf("repeated sweep: %q, %v, runs %d, %d points", stim, err, c.Runs.Runs, len(c.Points))
	}
	c = NewConfig()
	c.Runs.Runs = 2
	if _, err := c.ConfigureProfile(ProfilePlan{Sweep: ProfileSweep{Lists: []Axis{{Name: Concurrency, Spec: "1,2", Values: []float64{1, 2}}}},
		SweepMode: "other"}); err == nil || !strings.Contains(err.Error(), "--parameter-sweep-mode") {
		t.Errorf("bad mode: %v", err)
	}
	c = NewConfig()
	if stim, err := c.ConfigureProfile(ProfilePlan{Search: &SearchConfig{}}); err != nil || stim != "search" || c.Search == nil {
		t.Errorf("search: %q, %v", stim, err)
	}
}

func newConfig() *Config { c := NewConfig(); return &c }
