package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/replay"
)

func parseTimingFlags(t *testing.T, args ...string) replay.Config {
	t.Helper()
	var got replay.Config
	cmd := &cli.Command{Name: "replay", Flags: timingFlags(), Action: func(_ context.Context, cmd *cli.Command) error {
		var err error
		got, err = flagmap.Timing(cmd)
		return err
	}}
	if err := cmd.Run(t.Context(), append([]string{"replay"}, args...)); err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return got
}

func TestTimingFlagsDefaults(t *testing.T) {
	if diff := cmp.Diff(replay.NewConfig(), parseTimingFlags(t)); diff != "" {
		t.Errorf("flag defaults differ from NewConfig (-want +got):\n%s", diff)
	}
}

func TestTimingFlagsEvery(t *testing.T) {
	got := parseTimingFlags(t, "--mode", "rate", "--no-auto-offset", "--start-offset", "1s", "--end-offset", "2s", "--speedup", "3",
		"--request-rate", "4.5", "--arrival", "gamma", "--smoothness", "0.5", "--concurrency", "6", "--rate-ramp", "7s",
		"--concurrency-ramp", "8s", "--user-centric-rate", "9", "--num-users", "10", "--request-count", "11",
		"--duration", "12s", "--grace", "13s", "--warmup-requests", "14", "--warmup-duration", "15s", "--late", "skip",
		"--late-threshold", "16ms", "--seed", "17", "--max-lateness", "18ms", "--senders", "19",
		"--dependencies", "closed")
	want := replay.Config{Mode: replay.ModeRate, AutoOffset: false, StartOffset: time.Second, EndOffset: 2 * time.Second, Speedup: 3,
		RequestRate: 4.5, Arrival: replay.ArrivalGamma, Smoothness: 0.5, Concurrency: 6, RateRamp: 7 * time.Second,
		ConcurrencyRamp: 8 * time.Second, UserCentricRate: 9, NumUsers: 10, RequestCount: 11, Duration: 12 * time.Second,
		Grace: 13 * time.Second, WarmupRequests: 14, WarmupDuration: 15 * time.Second, Late: replay.LateSkip,
		LateThreshold: 16 * time.Millisecond, Seed: 17, MaxLateness: 18 * time.Millisecond, Senders: 19,
		Dependencies: replay.DepsClosed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTimingFlagsEnv(t *testing.T) {
	t.Setenv("REPRISE_MAX_LATENESS", "250us")
	t.Setenv("REPRISE_AUTO_OFFSET", "false")
	got := parseTimingFlags(t)
	if got.MaxLateness != 250*time.Microsecond || got.AutoOffset {
		t.Errorf("env not read: %+v", got)
	}
}

func TestTimingFlagNames(t *testing.T) {
	// The flags of the issue, all present, and each with an env var.
	want := []string{"auto-offset", "start-offset", "end-offset", "speedup", "request-rate", "arrival", "smoothness",
		"concurrency", "rate-ramp", "concurrency-ramp", "user-centric-rate", "num-users", "request-count", "duration",
		"grace", "warmup-requests", "warmup-duration", "late", "seed", "max-lateness"}
	var names []string
	for _, f := range timingFlags() {
		names = append(names, f.Names()[0])
		if df, ok := f.(cli.DocGenerationFlag); ok && len(df.GetEnvVars()) == 0 {
			t.Errorf("--%s has no environment variable", f.Names()[0])
		}
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("missing --%s", w)
		}
	}
	for _, n := range names {
		if strings.ToLower(n) != n || strings.Contains(n, "_") {
			t.Errorf("--%s is not kebab-case", n)
		}
	}
}

// TestTimingFlagEveryField: every replay.Config field has a flag, named
// after the field in kebab case, and timingFlag knows it (flagSpelled
// spells the field's errors with it).
func TestTimingFlagEveryField(t *testing.T) {
	flags := map[string]bool{}
	for _, f := range timingFlags() {
		flags[f.Names()[0]] = true
	}
	kebab := regexp.MustCompile(`([a-z])([A-Z])`)
	rt := reflect.TypeFor[replay.Config]()
	for i := range rt.NumField() {
		field := rt.Field(i).Name
		if field == "Adaptive" || field == "Watch" {
			continue // controllers profile's --adaptive-scale and --measurement-interval build (timingFlag spells them so)
		}
		want := strings.ToLower(kebab.ReplaceAllString(field, "$1-$2"))
		if got := timingFlag[field]; got != want {
			t.Errorf("timingFlag[%s] = %q, want %q", field, got, want)
		}
		if !flags[want] {
			t.Errorf("no --%s flag for Config.%s", want, field)
		}
	}
	if len(timingFlag) != rt.NumField() {
		t.Errorf("timingFlag has %d entries for %d fields", len(timingFlag), rt.NumField())
	}
}

// TestReplayErrorsSpellFlags: the replay library names Config fields; the
// command's messages name the flags instead.
func TestReplayErrorsSpellFlags(t *testing.T) {
	base := []string{"replay", "--url", "http://127.0.0.1:9", "--model", "m", "--isl", "8", "--osl", "2", "--quiet"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--concurrency", "2", "--late", "never", "--end-offset", "1s", "--start-offset", "2s"},
			[]string{`--late "never": want burst, shift or skip`, "--end-offset 1s is before --start-offset 2s"}},
		// Found when the plan resolves the mode, after validation.
		{[]string{"--concurrency", "2", "--speedup", "2"},
			[]string{"--speedup needs the fixed schedule (a trace with timestamps)"}},
		{nil, []string{"no load model: give --request-rate, --concurrency or --user-centric-rate (or a trace)"}},
	} {
		code, _, stderr := runCLI(t, "", append(base, tc.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, stderr)
			}
		}
		for _, field := range []string{"Speedup", "EndOffset", "StartOffset", "Late ", "RequestRate"} {
			if strings.Contains(stderr, field) {
				t.Errorf("%v: stderr names the field %s:\n%s", tc.args, field, stderr)
			}
		}
	}
}

// TestFlagSpelled: field errors are spelled with flags wherever they sit
// in an error's tree, and errors.Is still finds what they wrap.
func TestFlagSpelled(t *testing.T) {
	st := replay.Stats{MaxLateness: time.Millisecond, LatenessBudgetExceeded: true,
		Lateness: replay.Percentiles{P99: 3 * time.Millisecond}, Late: 2, Dispatched: 10}
	late := flagSpelled(st.Check())
	if !errors.Is(late, replay.ErrLatenessBudget) || !strings.Contains(late.Error(), "p99 lateness 3ms > --max-lateness 1ms (2 of 10") {
		t.Errorf("lateness: %v", late)
	}
	c := replay.NewConfig()
	c.Speedup, c.Late = -1, "x"
	other := errors.New("--model is required")
	err := flagSpelled(fmt.Errorf("plan: %w", errors.Join(other, c.Validate())))
	want := "plan: --model is required\n--late \"x\": want burst, shift or skip\n--speedup -1: want a finite number > 0"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, other) {
		t.Error("errors.Is does not see through")
	}
	if _, ok := errors.AsType[*replay.FieldError](err); !ok {
		t.Error("errors.As does not find the FieldError")
	}
	if plain := errors.New("x"); flagSpelled(plain) != plain || flagSpelled(nil) != nil {
		t.Error("an error without field errors is changed")
	}
}

func TestParseShardFlag(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == flagmap.ShardIndexEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		in, env string
		want    replay.Shard
		err     string
	}{
		{"", "", replay.Shard{}, ""},
		{"2/4", "", replay.Shard{Index: 2, Count: 4}, ""},
		{"index/4", "3", replay.Shard{Index: 3, Count: 4}, ""},
		{"index/4", "", replay.Shard{}, "$JOB_COMPLETION_INDEX is not set"},
		{"index/4", "4", replay.Shard{}, "the index must be 0 to 3"},
		{"4/4", "", replay.Shard{}, "the index must be 0 to 3"},
		{"two", "", replay.Shard{}, "want INDEX/COUNT"},
	} {
		got, err := flagmap.ParseShard(tc.in, env(tc.env))
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("flagmap.ParseShard(%q, $%s=%q) = %v, %v; want %v, %q", tc.in, flagmap.ShardIndexEnv, tc.env, got, err, tc.want, tc.err)
		}
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                          {},
		"+30s":                      now.Add(30 * time.Second),
		"2026-11-25T19:00:00Z":      now.Add(time.Hour),
		"2026-11-25T20:00:00+01:00": now.Add(time.Hour),
	} {
		if got, err := flagmap.ParseStartAt(in, now); err != nil || !got.Equal(want) {
			t.Errorf("flagmap.ParseStartAt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"+-1s", "+soon", "18:00", "tomorrow"} {
		if _, err := flagmap.ParseStartAt(in, now); err == nil {
			t.Errorf("flagmap.ParseStartAt(%q) succeeded", in)
		}
	}
}
