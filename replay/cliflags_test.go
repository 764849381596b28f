package replay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v3"
)

func parseFlags(t *testing.T, args ...string) Config {
	t.Helper()
	var got Config
	cmd := &cli.Command{Name: "replay", Flags: CLIFlags(), Action: func(_ context.Context, cmd *cli.Command) error {
		var err error
		got, err = ConfigFromCLI(cmd)
		return err
	}}
	if err := cmd.Run(t.Context(), append([]string{"replay"}, args...)); err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return got
}

func TestCLIDefaults(t *testing.T) {
	if diff := cmp.Diff(NewConfig(), parseFlags(t)); diff != "" {
		t.Errorf("flag defaults differ from NewConfig (-want +got):\n%s", diff)
	}
}

func TestCLIEveryFlag(t *testing.T) {
	got := parseFlags(t, "--mode", "rate", "--no-auto-offset", "--start-offset", "1s", "--end-offset", "2s", "--speedup", "3",
		"--request-rate", "4.5", "--arrival", "gamma", "--smoothness", "0.5", "--concurrency", "6", "--rate-ramp", "7s",
		"--concurrency-ramp", "8s", "--user-centric-rate", "9", "--num-users", "10", "--request-count", "11",
		"--duration", "12s", "--grace", "13s", "--warmup-requests", "14", "--warmup-duration", "15s", "--late", "skip",
		"--late-threshold", "16ms", "--seed", "17", "--max-lateness", "18ms", "--senders", "19")
	want := Config{Mode: ModeRate, AutoOffset: false, StartOffset: time.Second, EndOffset: 2 * time.Second, Speedup: 3,
		RequestRate: 4.5, Arrival: ArrivalGamma, Smoothness: 0.5, Concurrency: 6, RateRamp: 7 * time.Second,
		ConcurrencyRamp: 8 * time.Second, UserCentricRate: 9, NumUsers: 10, RequestCount: 11, Duration: 12 * time.Second,
		Grace: 13 * time.Second, WarmupRequests: 14, WarmupDuration: 15 * time.Second, Late: LateSkip,
		LateThreshold: 16 * time.Millisecond, Seed: 17, MaxLateness: 18 * time.Millisecond, Senders: 19}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCLIEnv(t *testing.T) {
	t.Setenv("REPRISE_MAX_LATENESS", "250us")
	t.Setenv("REPRISE_AUTO_OFFSET", "false")
	got := parseFlags(t)
	if got.MaxLateness != 250*time.Microsecond || got.AutoOffset {
		t.Errorf("env not read: %+v", got)
	}
}

func TestCLIFlagNames(t *testing.T) {
	// The flags of the issue, all present, and each with an env var.
	want := []string{"auto-offset", "start-offset", "end-offset", "speedup", "request-rate", "arrival", "smoothness",
		"concurrency", "rate-ramp", "concurrency-ramp", "user-centric-rate", "num-users", "request-count", "duration",
		"grace", "warmup-requests", "warmup-duration", "late", "seed", "max-lateness"}
	var names []string
	for _, f := range CLIFlags() {
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
