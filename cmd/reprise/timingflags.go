package main

import (
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/replay"
)

// timingFlags returns the timing flags of the replay command, one per
// replay.Config field (timingFlag names them), with the defaults of
// replay.NewConfig and an environment variable each (--max-lateness reads
// REPRISE_MAX_LATENESS). Every call returns new flag values, so two
// commands may each include them.
func timingFlags() []cli.Flag {
	d := replay.NewConfig()
	const (
		catSchedule = "Timing: fixed schedule"
		catLoad     = "Timing: load model"
		catStop     = "Timing: stop and warmup"
		catDispatch = "Timing: dispatcher"
		catShard    = "Timing: shards"
	)
	return []cli.Flag{
		&cli.StringFlag{Name: "mode", Category: catLoad, Sources: envVars("mode"),
			Usage: "timing `MODE`: fixed, rate, concurrency or user-centric (default: fixed for a trace with timestamps, else from the flags)"},
		&cli.BoolWithInverseFlag{Name: "auto-offset", Value: d.AutoOffset, Category: catSchedule, Sources: envVars("auto-offset"),
			Usage: "start the trace's first timestamp now; --no-auto-offset keeps absolute offsets"},
		&cli.DurationFlag{Name: "start-offset", Category: catSchedule, Sources: envVars("start-offset"),
			Usage: "replay only rows with timestamp ≥ `OFFSET` (trace time)"},
		&cli.DurationFlag{Name: "end-offset", Category: catSchedule, Sources: envVars("end-offset"),
			Usage: "replay only rows with timestamp ≤ `OFFSET` (trace time; 0 = to the end)"},
		&cli.FloatFlag{Name: "speedup", Value: d.Speedup, Category: catSchedule, Sources: envVars("speedup"),
			Usage: "divide trace time by `X` (2 = twice as fast, 0.5 = half as fast)"},
		&cli.FloatFlag{Name: "request-rate", Category: catLoad, Sources: envVars("request-rate"),
			Usage: "send `R` requests per second (every turn counts)"},
		&cli.StringFlag{Name: "arrival", Value: string(d.Arrival), Category: catLoad, Sources: envVars("arrival"),
			Usage: "inter-arrival `PATTERN` of --request-rate: constant, poisson or gamma"},
		&cli.FloatFlag{Name: "smoothness", Value: d.Smoothness, Category: catLoad, Sources: envVars("smoothness"),
			Usage: "gamma shape `S` of --arrival gamma: 1 = Poisson, < 1 burstier, > 1 smoother"},
		&cli.IntFlag{Name: "concurrency", Category: catLoad, Sources: envVars("concurrency"),
			Usage: "keep `N` sessions in flight (closed loop), or cap them in the other modes"},
		&cli.DurationFlag{Name: "rate-ramp", Category: catLoad, Sources: envVars("rate-ramp"),
			Usage: "ramp the request rate linearly from 0 over `D`"},
		&cli.StringFlag{Name: "rate-series", Category: catLoad, Sources: envVars("rate-series"),
			Usage: "the request rate follows the piecewise-linear series of JSON `FILE` {\"points\":[{\"time_s\":S,\"qps\":R},…]} (AIPerf's --request-rate-series: the first rate before its time, the last after; arrivals by --arrival); excludes --request-rate and --rate-ramp"},
		&cli.DurationFlag{Name: "concurrency-ramp", Category: catLoad, Sources: envVars("concurrency-ramp"),
			Usage: "raise the closed-loop concurrency from 1 in even steps over `D`"},
		&cli.BoolFlag{Name: "ignore-turn-delays", Category: catLoad, Sources: envVars("ignore-turn-delays"),
			Usage: "send a session's next turn (or a dependent row) as soon as the one before completed, without the trace's think time"},
		&cli.DurationFlag{Name: "max-turn-delay", Category: catLoad, Sources: envVars("max-turn-delay"),
			Usage: "cap every think time between turns (and a dependent row's delay) at `D`, after --speedup (0 = no cap)"},
		&cli.IntFlag{Name: "prefill-concurrency", Category: catLoad, Sources: envVars("prefill-concurrency"),
			Usage: "at most `N` requests waiting for their first token (streamed responses; freed at the first token; ≤ --concurrency)"},
		&cli.DurationFlag{Name: "prefill-concurrency-ramp", Category: catLoad, Sources: envVars("prefill-concurrency-ramp"),
			Usage: "raise --prefill-concurrency from 1 in even steps over `D`"},
		&cli.FloatFlag{Name: "user-centric-rate", Category: catLoad, Sources: envVars("user-centric-rate"),
			Usage: "total turn rate `R` per second shared by --num-users users (KV-cache oriented)"},
		&cli.IntFlag{Name: "num-users", Category: catLoad, Sources: envVars("num-users"),
			Usage: "`U` users of --user-centric-rate, each sending a turn every U/R seconds"},
		&cli.IntFlag{Name: "request-count", Category: catStop, Sources: envVars("request-count"), HideDefault: true,
			Usage: "stop after `N` measured requests (default: the whole trace; 10 for a synthetic load without --duration)"},
		&cli.DurationFlag{Name: "duration", Category: catStop, Sources: envVars("duration"),
			Usage: "stop sending `D` after the measured phase began"},
		&cli.DurationFlag{Name: "grace", Value: d.Grace, Category: catStop, Sources: envVars("grace"),
			Usage: "after --duration, let in-flight requests finish for `D`, then cancel them"},
		&cli.IntFlag{Name: "warmup-requests", Category: catStop, Sources: envVars("warmup-requests"),
			Usage: "mark the first `N` requests as warmup (excluded from results)"},
		&cli.DurationFlag{Name: "warmup-duration", Category: catStop, Sources: envVars("warmup-duration"),
			Usage: "mark requests due in the first `D` as warmup (excluded from results)"},
		&cli.StringFlag{Name: "late", Value: string(d.Late), Category: catDispatch, Sources: envVars("late"),
			Usage: "behind schedule `POLICY`: burst (send at once, record lateness), shift (move the rest) or skip (drop and count)"},
		&cli.DurationFlag{Name: "late-threshold", Value: d.LateThreshold, Category: catDispatch, Sources: envVars("late-threshold"),
			Usage: "a request more than `D` behind its time is late (counted; shifted or skipped under --late)"},
		&cli.Uint64Flag{Name: "seed", Value: d.Seed, Category: catLoad, Sources: envVars("seed"),
			Usage: "`SEED` of every random draw (equal seeds, equal schedules)"},
		&cli.DurationFlag{Name: "max-lateness", Category: catDispatch, Sources: envVars("max-lateness"),
			Usage: "p99 lateness budget `D`; over it the run warns and exits with code 4 (0 = none)"},
		&cli.IntFlag{Name: "senders", Category: catDispatch, Sources: envVars("senders"), HideDefault: true,
			Usage: fmt.Sprintf("`N` long-lived sender goroutines, the most requests in flight (default: --concurrency, else %d)", replay.DefaultSenders)},
		&cli.StringFlag{Name: "dependencies", Value: string(d.Dependencies), Category: catLoad, Sources: envVars("dependencies"),
			Usage: "timing `POLICY` of dependent requests (wait_for): open (own timestamp, but after the dependencies), closed (dependencies + delay only) or strict (timestamps only)"},
		&cli.StringFlag{Name: "shard", Category: catShard, Sources: envVars("shard"),
			Usage: "send shard `I/N` of the workload (whole sessions; rate, concurrency, users and counts divided by N); " +
				"I \"index\" reads $" + flagmap.ShardIndexEnv + " (a Kubernetes Indexed Job's)"},
		&cli.StringFlag{Name: "start-at", Category: catShard, Sources: envVars("start-at"),
			Usage: "wait for wall-clock `TIME` (RFC 3339, or +DURATION from now) to start: shards given one TIME share a timeline"},
	}
}

// timingFlag is the flag of each replay.Config field: the field's name in
// kebab case.
var timingFlag = map[string]string{
	"Mode": "mode", "AutoOffset": "auto-offset", "StartOffset": "start-offset", "EndOffset": "end-offset",
	"Speedup": "speedup", "RequestRate": "request-rate", "Arrival": "arrival", "Smoothness": "smoothness",
	"Concurrency": "concurrency", "RateRamp": "rate-ramp", "RateSeries": "rate-series", "ConcurrencyRamp": "concurrency-ramp",
	"UserCentricRate": "user-centric-rate", "NumUsers": "num-users", "RequestCount": "request-count",
	"Duration": "duration", "Grace": "grace", "WarmupRequests": "warmup-requests",
	"WarmupDuration": "warmup-duration", "Late": "late", "LateThreshold": "late-threshold", "Seed": "seed",
	"MaxLateness": "max-lateness", "Senders": "senders", "Dependencies": "dependencies", "Shard": "shard", "StartAt": "start-at",
	"PrefillConcurrency": "prefill-concurrency", "PrefillConcurrencyRamp": "prefill-concurrency-ramp",
	"IgnoreTurnDelays": "ignore-turn-delays", "MaxTurnDelay": "max-turn-delay", "Adaptive": "adaptive-scale", "Watch": "measurement-interval", // profile's
}

// timingFlagName spells a replay.Config field as its flag ("--speedup").
func timingFlagName(field string) string {
	if f, ok := timingFlag[field]; ok {
		return "--" + f
	}
	return field
}
