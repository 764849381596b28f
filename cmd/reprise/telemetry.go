package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
)

const catTelemetry = "Telemetry"

// telemetryFlags are replay's server-metrics, GPU and live-metrics
// flags, and where the metrics are sent (exportFlags).
func telemetryFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringSliceFlag{Name: "server-metrics", Category: catTelemetry, Sources: envVars("server-metrics"),
			Usage: "also scrape the Prometheus page at `URL` (repeatable; the endpoint's /metrics is scraped by default)"},
		&cli.BoolFlag{Name: "no-server-metrics", Category: catTelemetry, Sources: envVars("no-server-metrics"),
			Usage: "do not scrape the endpoint's /metrics"},
		&cli.DurationFlag{Name: "metrics-interval", Value: reprise.DefaultMetricsInterval, Category: catTelemetry,
			Sources: envVars("metrics-interval"), Usage: "scrape server metrics and sample GPUs every `D`"},
		&cli.StringFlag{Name: "gpu-telemetry", Category: catTelemetry, Sources: envVars("gpu-telemetry"),
			Usage: "sample GPUs: `SOURCE` is dcgm (a DCGM exporter at " + reprise.DefaultDCGMURL +
				"), dcgm=URL, or nvml (local GPUs through the driver)"},
		&cli.StringFlag{Name: "metrics-addr", Category: catTelemetry, Sources: envVars("metrics-addr"),
			Usage: "serve the run's own metrics (TTFT, ITL, latency, lateness, requests, tokens) for Prometheus at http://`HOST:PORT`/metrics while it runs (docs/format/live-metrics.md)"},
		&cli.DurationFlag{Name: "metrics-linger", Value: reprise.DefaultMetricsLinger, Category: catTelemetry, Sources: envVars("metrics-linger"),
			Usage: "after the run, keep serving --metrics-addr until a scrape has read the final values, for at most `D` (0: stop at the end)"},
	}, exportFlags()...)
}
