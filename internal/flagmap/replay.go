package flagmap

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/replay"
)

// ShardIndexEnv is the variable --shard index/N reads its index from:
// the completion index Kubernetes gives each pod of an Indexed Job.
const ShardIndexEnv = "JOB_COMPLETION_INDEX"

// Timing copies the flags of timingFlags from cmd into a
// replay.Config. It does not validate: replay.Config.Validate or
// replay.NewPlan does. The error is a --shard or --start-at that does not
// parse.
func Timing(v Values) (replay.Config, error) {
	c := replay.NewConfig()
	c.Mode = replay.Mode(strings.ToLower(v.String("mode")))
	if c.Mode == "auto" {
		c.Mode = replay.ModeAuto
	}
	c.AutoOffset = v.Bool("auto-offset")
	c.StartOffset = v.Duration("start-offset")
	c.EndOffset = v.Duration("end-offset")
	c.Speedup = v.Float("speedup")
	c.RequestRate = v.Float("request-rate")
	c.Arrival = replay.Arrival(strings.ToLower(v.String("arrival")))
	c.Smoothness = v.Float("smoothness")
	c.Concurrency = v.Int("concurrency")
	c.RateRamp = v.Duration("rate-ramp")
	c.ConcurrencyRamp = v.Duration("concurrency-ramp")
	c.UserCentricRate = v.Float("user-centric-rate")
	c.NumUsers = v.Int("num-users")
	c.RequestCount = v.Int("request-count")
	c.Duration = v.Duration("duration")
	c.Grace = v.Duration("grace")
	c.WarmupRequests = v.Int("warmup-requests")
	c.WarmupDuration = v.Duration("warmup-duration")
	c.Late = replay.LatePolicy(strings.ToLower(v.String("late")))
	c.LateThreshold = v.Duration("late-threshold")
	c.Seed = v.Uint64("seed")
	c.MaxLateness = v.Duration("max-lateness")
	c.Senders = v.Int("senders")
	c.PrefillConcurrency = v.Int("prefill-concurrency")
	c.IgnoreTurnDelays = v.Bool("ignore-turn-delays")
	c.MaxTurnDelay = v.Duration("max-turn-delay")
	c.PrefillConcurrencyRamp = v.Duration("prefill-concurrency-ramp")
	c.Dependencies = replay.DepPolicy(strings.ToLower(v.String("dependencies")))
	var err1, err2, err3 error
	c.Shard, err1 = ParseShard(v.String("shard"), os.Getenv)
	c.StartAt, err2 = ParseStartAt(v.String("start-at"), time.Now())
	if path := v.String("rate-series"); path != "" {
		if c.RateSeries, err3 = replay.ReadRateSeries(path); err3 != nil {
			err3 = fmt.Errorf("--rate-series: %w", err3)
		}
	}
	return c, errors.Join(err1, err2, err3)
}

// ParseShard parses --shard: "I/N", where I may be "index", the value
// of $JOB_COMPLETION_INDEX; "" is the whole workload.
func ParseShard(s string, getenv func(string) string) (replay.Shard, error) {
	if s == "" {
		return replay.Shard{}, nil
	}
	if i, n, ok := strings.Cut(s, "/"); ok && strings.TrimSpace(i) == "index" {
		v := getenv(ShardIndexEnv)
		if v == "" {
			return replay.Shard{}, fmt.Errorf("--shard %s: $%s is not set (it is set in the pods of a Kubernetes Indexed Job); give the index, e.g. --shard 0/%s",
				s, ShardIndexEnv, n)
		}
		sh, err := replay.ParseShard(v + "/" + n)
		if err != nil {
			return replay.Shard{}, fmt.Errorf("--shard %s with $%s=%q: %w", s, ShardIndexEnv, v, err)
		}
		return sh, nil
	}
	sh, err := replay.ParseShard(s)
	if err != nil {
		return replay.Shard{}, fmt.Errorf("--shard: %w", err)
	}
	return sh, nil
}

// ParseStartAt parses --start-at: an RFC 3339 time, or "+DURATION" after
// now; "" is no start time.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutPrefix(s, "+"); ok {
		dur, err := time.ParseDuration(d)
		if err != nil || dur < 0 {
			return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time (2026-11-25T18:00:00Z) or +DURATION (+30s)", s)
		}
		return now.Add(dur).Round(0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time (2026-11-25T18:00:00Z) or +DURATION (+30s)", s)
	}
	return t, nil
}

// Telemetry reads the telemetry flags.
func Telemetry(v Values) (reprise.TelemetryOptions, error) {
	var errs []error
	tc := reprise.TelemetryOptions{Interval: v.Duration("metrics-interval"), EndpointMetrics: !v.Bool("no-server-metrics"),
		MetricsAddr: v.String("metrics-addr"), MetricsLinger: v.Duration("metrics-linger")}
	if tc.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--metrics-interval %v: must be positive", tc.Interval))
	}
	var eerr error
	tc.OTLP, tc.MLflow, eerr = Exports(v)
	errs = append(errs, eerr)
	for _, t := range v.StringSlice("server-metrics") {
		t = WithScheme(t)
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--server-metrics %q: want an http(s) URL such as http://host:8000/metrics", t))
			continue
		}
		tc.ServerMetrics = append(tc.ServerMetrics, t)
	}
	switch spec := v.String("gpu-telemetry"); {
	case spec == "":
	case spec == "nvml":
		tc.GPU = "nvml"
	case spec == "dcgm":
		tc.GPU, tc.DCGMURL = "dcgm", reprise.DefaultDCGMURL
	case strings.HasPrefix(spec, "dcgm="):
		tc.GPU, tc.DCGMURL = "dcgm", WithScheme(strings.TrimPrefix(spec, "dcgm="))
		if u, err := url.Parse(tc.DCGMURL); err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("--gpu-telemetry %q: want dcgm=http://host:9400/metrics", spec))
		}
	default:
		errs = append(errs, fmt.Errorf("--gpu-telemetry %q: want dcgm, dcgm=URL or nvml", spec))
	}
	return tc, errors.Join(errs...)
}

// Warmup reads the warmup phase's flags into o, after o.Replay is
// set: with any of them, --warmup-requests or --warmup-duration bound a
// phase at its own load (o.Warmup) instead of marking the run's first
// requests.
func Warmup(v Values, o *reprise.Options) {
	w := &o.Warmup
	w.Concurrency, w.ConcurrencyRamp = v.Int("warmup-concurrency"), v.Duration("warmup-concurrency-ramp")
	w.RequestRate, w.RateRamp = v.Float("warmup-request-rate"), v.Duration("warmup-rate-ramp")
	w.Arrival = replay.Arrival(strings.ToLower(v.String("warmup-arrival")))
	w.PrefillConcurrency, w.PrefillConcurrencyRamp = v.Int("warmup-prefill-concurrency"), v.Duration("warmup-prefill-concurrency-ramp")
	w.Grace = v.Duration("warmup-grace")
}

// WarmupPhase moves the warmup's length from o.Replay to o.Warmup when
// a warmup load is set (Warmup).
func WarmupPhase(o *reprise.Options) {
	w := &o.Warmup
	if *w == (reprise.WarmupLoad{}) {
		return
	}
	w.Requests, w.Duration = o.Replay.WarmupRequests, o.Replay.WarmupDuration
	o.Replay.WarmupRequests, o.Replay.WarmupDuration = 0, 0
}

// ServerControl reads serverControlFlags.
func ServerControl(v Values) reprise.ServerControlOptions {
	return reprise.ServerControlOptions{WaitForModel: v.Duration("wait-for-model"), WaitMode: v.String("wait-mode"),
		WaitInterval: v.Duration("wait-interval"), ResetCache: v.Bool("reset-cache"), ResetCachePath: v.String("reset-cache-path"),
		ResetCacheTimeout: v.Duration("reset-cache-timeout"), Profiler: v.Bool("server-profiler")}
}
