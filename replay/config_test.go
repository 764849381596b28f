package replay

import (
	"errors"
	"reflect"
	"regexp"
	"slices"
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
	if !reflect.DeepEqual(c, before) {
		t.Error("Validate changed the config")
	}
	for _, want := range []string{"Speedup 0", "Arrival \"uniform\"", "Late \"never\"", "Concurrency -1", "EndOffset 1s is before StartOffset 2s", "mutually exclusive", "NumUsers needs"} {
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
		{"rate with fixed schedule", func(c *Config) { c.RequestRate = 10; c.Arrival = ArrivalGamma }, true, true, ModeFixed, "RequestRate, Arrival/Smoothness conflict"},
		{"rate over a trace", func(c *Config) { c.Mode = ModeRate; c.RequestRate = 10 }, true, true, ModeRate, ""},
		{"trace without timestamps", func(*Config) {}, true, false, ModeAuto, "no timestamps"},
		{"synthetic rate", func(c *Config) { c.RequestRate = 5 }, false, false, ModeRate, ""},
		{"synthetic concurrency", func(c *Config) { c.Concurrency = 5 }, false, false, ModeConcurrency, ""},
		{"synthetic speedup", func(c *Config) { c.Concurrency = 5; c.Speedup = 2 }, false, false, ModeConcurrency, "Speedup needs"},
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
	for _, want := range []string{"RequestRate needs Mode rate", "RateRamp needs", "Speedup needs"} {
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
	if err == nil || !strings.Contains(err.Error(), "Late \"x\"") || !strings.Contains(err.Error(), "RequestRate") {
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

// TestErrorsNameFields: every configuration problem is a *FieldError that
// names Config fields as Go spells them, never a flag, and Format spells
// them as its caller asks (the reprise command: flags).
func TestErrorsNameFields(t *testing.T) {
	bad := NewConfig()
	bad.Speedup, bad.Arrival, bad.Late, bad.Concurrency = 0, "uniform", "never", -1
	bad.EndOffset, bad.StartOffset = time.Second, 2*time.Second
	bad.WarmupRequests, bad.WarmupDuration, bad.NumUsers = 1, time.Second, 3
	explicit := NewConfig()
	explicit.Mode, explicit.Concurrency, explicit.RequestRate, explicit.Speedup = ModeConcurrency, 4, 3, 3
	conflict := NewConfig()
	conflict.RequestRate, conflict.Arrival, conflict.RateRamp = 10, ArrivalGamma, time.Second
	none := NewConfig()
	window := NewConfig()
	window.StartOffset = time.Hour
	noTS := tsRows(0, ms(1))
	noTS[1].SessionID, noTS[1].HasOffset, noTS[1].Line = "s", false, 7
	uc := NewConfig()
	uc.Mode, uc.UserCentricRate, uc.NumUsers = ModeUserCentric, 5, 2
	over := Stats{MaxLateness: time.Millisecond, LatenessBudgetExceeded: true, Lateness: Percentiles{P99: 2 * time.Millisecond}}
	for _, tc := range []struct {
		name   string
		err    error
		fields []string // the Field of each FieldError, in order
		flags  string   // a part of the message spelled with flags
	}{
		{"validate", bad.Validate(), []string{"Arrival", "Late", "Speedup", "Concurrency", "EndOffset", "WarmupRequests", "UserCentricRate"},
			"--end-offset 1s is before --start-offset 2s"},
		{"explicit mode", explicit.Validate(), []string{"Speedup", "RequestRate"}, "--speedup needs the fixed schedule (--mode fixed)"},
		{"conflict", func() error { _, err := conflict.ModeFor(true, true); return err }(), []string{"Mode"},
			"--request-rate, --rate-ramp, --arrival/--smoothness conflict with the trace's timestamps (fixed schedule); add --mode rate"},
		{"no load", func() error { _, err := none.ModeFor(false, false); return err }(), []string{"Mode"},
			"give --request-rate, --concurrency or --user-centric-rate (or a trace)"},
		{"empty window", func() error { _, err := NewPlan(window, tsRows(0, ms(1))); return err }(), []string{"StartOffset"},
			"no trace row lies inside --start-offset 1h0m0s .. --end-offset 0s"},
		{"first turn without timestamp", func() error { _, err := NewPlan(NewConfig(), noTS); return err }(), []string{"Mode"},
			`line 7 (session "s"); use --mode rate or concurrency`},
		{"user-centric single turns", func() error { _, err := NewPlan(uc, tsRows(0, ms(1))); return err }(), []string{"UserCentricRate"},
			"--user-centric-rate needs a trace with multi-turn sessions"},
		{"lateness budget", over.Check(), []string{"MaxLateness"}, "p99 lateness 2ms > --max-lateness 1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(tc.err.Error(), "--") {
				t.Errorf("library error speaks in flags: %v", tc.err)
			}
			var fes []*FieldError
			var fields []string
			var spelled []string
			var walk func(error)
			walk = func(e error) {
				if fe, ok := e.(*FieldError); ok {
					fes = append(fes, fe)
					fields = append(fields, fe.Field)
					spelled = append(spelled, fe.Format(func(f string) string {
						return "--" + strings.ToLower(regexp.MustCompile(`([a-z])([A-Z])`).ReplaceAllString(f, "$1-$2"))
					}))
					return
				}
				if j, ok := e.(interface{ Unwrap() []error }); ok {
					for _, x := range j.Unwrap() {
						walk(x)
					}
				}
			}
			walk(tc.err)
			if !slices.Equal(fields, tc.fields) {
				t.Errorf("fields %q, want %q (%v)", fields, tc.fields, tc.err)
			}
			if all := strings.Join(spelled, "\n"); !strings.Contains(all, tc.flags) {
				t.Errorf("spelled with flags:\n%s\nwant containing %q", all, tc.flags)
			}
			for _, fe := range fes {
				if fe.Format(nil) != fe.Error() {
					t.Errorf("Format(nil) %q != Error %q", fe.Format(nil), fe.Error())
				}
			}
		})
	}
	if !errors.Is(over.Check(), ErrLatenessBudget) {
		t.Error("the lateness budget error does not wrap ErrLatenessBudget")
	}
	// A value that looks like a field reference is printed as given.
	odd := NewConfig()
	odd.Mode = "{Speedup}%d"
	if err := odd.Validate(); err == nil || !strings.Contains(err.Error(), `Mode "{Speedup}%d"`) {
		t.Errorf("err = %v", err)
	}
}

// TestSendersOrDefault: the one rule for the number of senders.
func TestSendersOrDefault(t *testing.T) {
	for _, tc := range []struct {
		senders, concurrency, want int
	}{
		{0, 0, DefaultSenders},
		{0, 8, 8},   // a closed loop needs no more senders than sessions
		{16, 8, 16}, // set: as given
		{3, 0, 3},
	} {
		c := NewConfig()
		c.Senders, c.Concurrency = tc.senders, tc.concurrency
		if got := c.SendersOrDefault(); got != tc.want {
			t.Errorf("Senders %d, Concurrency %d: %d senders, want %d", tc.senders, tc.concurrency, got, tc.want)
		}
		c.RequestRate = 1
		p, err := NewPlan(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Senders() != tc.want {
			t.Errorf("Senders %d, Concurrency %d: plan has %d senders, want %d", tc.senders, tc.concurrency, p.Senders(), tc.want)
		}
	}
}
