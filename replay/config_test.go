package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

func TestNewConfigValid(t *testing.T) {
	c := NewConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("NewConfig is invalid: %v", err)
	}
}

func TestValidateReportsEverything(t *testing.T) {
	c := NewConfig()
	c.Speedup = 0
	c.Arrival = "uniform"
	c.Late = "never"
	c.Concurrency = -1
	c.EndOffset = time.Second
	c.StartOffset = 2 * time.Second
	c.WarmupRequests = 1
	c.WarmupDuration = time.Second
	c.NumUsers = 3
	before := c
	err := c.Validate()
	if c != before {
		t.Error("Validate changed the config")
	}
	for _, want := range []string{"--speedup", "--arrival", "--late", "--concurrency", "--end-offset", "mutually exclusive", "--num-users needs"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
	if n := len(strings.Split(err.Error(), "\n")); n != 7 {
		t.Errorf("%d problems reported, want 7:\n%v", n, err)
	}
}

func TestModeFor(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit       func(*Config)
		trace, ts  bool
		want       Mode
		wantErrSub string
	}{
		{"trace with timestamps", func(*Config) {}, true, true, ModeFixed, ""},
		{"rate with fixed schedule", func(c *Config) { c.RequestRate = 10; c.Arrival = ArrivalGamma }, true, true, ModeFixed, "--request-rate, --arrival/--smoothness conflict"},
		{"rate over a trace", func(c *Config) { c.Mode = ModeRate; c.RequestRate = 10 }, true, true, ModeRate, ""},
		{"trace without timestamps", func(*Config) {}, true, false, ModeAuto, "no timestamps"},
		{"synthetic rate", func(c *Config) { c.RequestRate = 5 }, false, false, ModeRate, ""},
		{"synthetic concurrency", func(c *Config) { c.Concurrency = 5 }, false, false, ModeConcurrency, ""},
		{"synthetic speedup", func(c *Config) { c.Concurrency = 5; c.Speedup = 2 }, false, false, ModeConcurrency, "--speedup"},
		{"user-centric synthetic", func(c *Config) { c.UserCentricRate = 5; c.NumUsers = 2 }, false, false, ModeUserCentric, "multi-turn"},
		{"nothing", func(*Config) {}, false, false, ModeAuto, "no load model"},
		{"fixed without trace", func(c *Config) { c.Mode = ModeFixed }, false, false, ModeFixed, "needs a trace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewConfig()
			tc.edit(&c)
			m, err := c.ModeFor(tc.trace, tc.ts)
			if m != tc.want {
				t.Errorf("mode %q, want %q", m, tc.want)
			}
			if (err == nil) != (tc.wantErrSub == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErrSub)) {
				t.Errorf("err %v, want containing %q", err, tc.wantErrSub)
			}
		})
	}
}

func TestExplicitModeRejectsForeignFlags(t *testing.T) {
	c := NewConfig()
	c.Mode = ModeConcurrency
	c.Concurrency = 4
	c.RequestRate = 3
	c.RateRamp = time.Second
	c.Speedup = 3
	err := c.Validate()
	for _, want := range []string{"--request-rate needs --mode rate", "--rate-ramp needs", "--speedup needs"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

func TestNewPlanErrors(t *testing.T) {
	// A session whose first turn has no timestamp cannot be on a fixed
	// schedule: the error names its line.
	rows := tsRows(0, ms(1))
	rows[1].SessionID, rows[1].HasOffset, rows[1].Line = "s", false, 7
	_, err := NewPlan(NewConfig(), rows)
	if err == nil || !strings.Contains(err.Error(), `line 7 (session "s")`) {
		t.Errorf("err = %v", err)
	}
	// Config and mode problems come together.
	c := NewConfig()
	c.Late = "x"
	c.RequestRate = 1
	_, err = NewPlan(c, tsRows(0))
	if err == nil || !strings.Contains(err.Error(), "--late") || !strings.Contains(err.Error(), "--request-rate") {
		t.Errorf("err = %v", err)
	}
	if _, err := NewPlan(NewConfig(), []trace.Row{}); err == nil {
		t.Error("empty trace accepted")
	}
	c = NewConfig()
	c.StartOffset = time.Hour
	if _, err := NewPlan(c, tsRows(0, ms(1))); err == nil || !strings.Contains(err.Error(), "no trace row") {
		t.Errorf("empty window: err = %v", err)
	}
}

func TestStatsCheck(t *testing.T) {
	s := Stats{MaxLateness: time.Millisecond, LatenessBudgetExceeded: true, Lateness: Percentiles{P99: 2 * time.Millisecond}}
	if err := s.Check(); !errors.Is(err, ErrLatenessBudget) {
		t.Errorf("Check = %v", err)
	}
	s.LatenessBudgetExceeded = false
	if err := s.Check(); err != nil {
		t.Errorf("Check = %v", err)
	}
}
