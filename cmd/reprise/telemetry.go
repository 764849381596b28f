package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
)

const catTelemetry = "Telemetry"

// telemetryFlags are replay's server-metrics and GPU flags.
func telemetryFlags() []cli.Flag {
	return []cli.Flag{
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
	}
}

// telemetryConfigFrom reads the telemetry flags.
func telemetryConfigFrom(cmd *cli.Command) (reprise.TelemetryOptions, error) {
	var errs []error
	tc := reprise.TelemetryOptions{Interval: cmd.Duration("metrics-interval"), EndpointMetrics: !cmd.Bool("no-server-metrics"),
		MetricsAddr: cmd.String("metrics-addr"), MetricsLinger: cmd.Duration("metrics-linger")}
	if tc.Interval <= 0 {
		errs = append(errs, fmt.Errorf("--metrics-interval %v: must be positive", tc.Interval))
	}
	for _, t := range cmd.StringSlice("server-metrics") {
		t = withScheme(t)
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--server-metrics %q: want an http(s) URL such as http://host:8000/metrics", t))
			continue
		}
		tc.ServerMetrics = append(tc.ServerMetrics, t)
	}
	switch spec := cmd.String("gpu-telemetry"); {
	case spec == "":
	case spec == "nvml":
		tc.GPU = "nvml"
	case spec == "dcgm":
		tc.GPU, tc.DCGMURL = "dcgm", reprise.DefaultDCGMURL
	case strings.HasPrefix(spec, "dcgm="):
		tc.GPU, tc.DCGMURL = "dcgm", withScheme(strings.TrimPrefix(spec, "dcgm="))
		if u, err := url.Parse(tc.DCGMURL); err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("--gpu-telemetry %q: want dcgm=http://host:9400/metrics", spec))
		}
	default:
		errs = append(errs, fmt.Errorf("--gpu-telemetry %q: want dcgm, dcgm=URL or nvml", spec))
	}
	return tc, errors.Join(errs...)
}
