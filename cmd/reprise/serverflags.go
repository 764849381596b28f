package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
)

// profileLoadAliases are AIPerf's spellings of the replay flags of load
// shaping and server control (as profileAliases).
var profileLoadAliases = map[string][]string{
	"wait-mode":          {"wait-for-model-mode"},
	"reset-cache":        {"reset-kv-cache"},
	"reset-cache-path":   {"reset-kv-cache-path"},
	"ignore-turn-delays": {"ignore-trace-delays"},
	"warmup-arrival":     {"warmup-arrival-pattern"},
}

// catServer is the help category of the server control flags.
const catServer = "Server control"

// serverControlFlags are the flags of reprise.ServerControlOptions, in
// replay, profile and sweep.
func serverControlFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "wait-for-model", Category: catServer, Sources: envVars("wait-for-model"),
			Usage: "before anything else, poll the server for up to `D` until it serves --model (0 = do not wait)"},
		&cli.StringFlag{Name: "wait-mode", Value: reprise.DefaultWaitForModelMode, Category: catServer, Sources: envVars("wait-mode"),
			Usage: "readiness `PROBE` of --wait-for-model: models (GET /v1/models lists the model), health (GET /health is 200), inference (a one-token request) or both (models, then inference)"},
		&cli.DurationFlag{Name: "wait-interval", Value: reprise.DefaultWaitForModelInterval, Category: catServer, Sources: envVars("wait-interval"),
			Usage: "pause `D` between two readiness polls"},
		&cli.BoolFlag{Name: "reset-cache", Category: catServer, Sources: envVars("reset-cache"),
			Usage: "empty the server's prefix cache before the first request: POST /reset_prefix_cache (vLLM), else /flush_cache (SGLang), or --reset-cache-path"},
		&cli.StringFlag{Name: "reset-cache-path", Category: catServer, Sources: envVars("reset-cache-path"),
			Usage: "`PATH` of the server's cache reset (POSTed with an empty body; any 2xx is success)"},
		&cli.DurationFlag{Name: "reset-cache-timeout", Value: reprise.DefaultResetCacheTimeout, Category: catServer, Sources: envVars("reset-cache-timeout"),
			Usage: "give up on the cache reset after `D`"},
		&cli.BoolFlag{Name: "server-profiler", Category: catServer, Sources: envVars("server-profiler"),
			Usage: "POST /start_profile before the first request and /stop_profile after the last (vLLM, SGLang)"},
		&cli.IntFlag{Name: "warmup-concurrency", Category: catWarmup, Sources: envVars("warmup-concurrency"),
			Usage: "a warmup phase before the run, with `N` sessions in flight (its length: --warmup-requests or --warmup-duration)"},
		&cli.DurationFlag{Name: "warmup-concurrency-ramp", Category: catWarmup, Sources: envVars("warmup-concurrency-ramp"),
			Usage: "raise the warmup phase's concurrency from 1 over `D`"},
		&cli.FloatFlag{Name: "warmup-request-rate", Category: catWarmup, Sources: envVars("warmup-request-rate"),
			Usage: "a warmup phase before the run at `R` requests per second"},
		&cli.DurationFlag{Name: "warmup-rate-ramp", Category: catWarmup, Sources: envVars("warmup-rate-ramp"),
			Usage: "ramp the warmup phase's rate from 0 over `D`"},
		&cli.StringFlag{Name: "warmup-arrival", Category: catWarmup, Sources: envVars("warmup-arrival"), HideDefault: true,
			Usage: "inter-arrival `PATTERN` of --warmup-request-rate: constant, poisson or gamma (default: --arrival)"},
		&cli.IntFlag{Name: "warmup-prefill-concurrency", Category: catWarmup, Sources: envVars("warmup-prefill-concurrency"),
			Usage: "the warmup phase's --prefill-concurrency `N`"},
		&cli.DurationFlag{Name: "warmup-prefill-concurrency-ramp", Category: catWarmup, Sources: envVars("warmup-prefill-concurrency-ramp"),
			Usage: "the warmup phase's --prefill-concurrency-ramp `D`"},
		&cli.DurationFlag{Name: "warmup-grace", Category: catWarmup, Sources: envVars("warmup-grace"), HideDefault: true,
			Usage: "after --warmup-duration, let the warmup phase's requests finish for `D` (default: --grace)"},
	}
}

// catWarmup is the help category of the warmup phase's flags.
const catWarmup = "Warmup phase"
