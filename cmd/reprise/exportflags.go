package main

import (
	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise"
)

const catExport = "Export to other systems"

// exportFlags are AIPerf's export flags: an OTLP push of the live
// metrics, and the finished run logged to MLflow.
func exportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "otel-url", Category: catExport, Sources: envVars("otel-url"),
			Usage: "push the run's live metrics (those of --metrics-addr) to the OpenTelemetry collector at `URL` as OTLP/HTTP JSON, every --metrics-interval and at the end (/v1/metrics is appended)"},
		&cli.StringFlag{Name: "stream", Value: reprise.StreamDefault, Category: catExport, Sources: envVars("stream"),
			Usage: "with --otel-url, which live metrics are pushed: `STREAM` is default (all), metrics (latency histograms, tokens) or timing (requests, in flight, intended rate)"},
		&cli.StringSliceFlag{Name: "otel-resource-attributes", Category: catExport, Sources: envVars("otel-resource-attributes"),
			Usage: "with --otel-url, add `KEY=VALUE[,…]` to the pushes' resource (repeatable)"},
		&cli.StringFlag{Name: "gen-ai-provider", Category: catExport, Sources: envVars("gen-ai-provider"),
			Usage: "with --otel-url, the resource's gen_ai.provider.name (and gen_ai.system): `NAME` such as openai or vllm"},
		&cli.StringFlag{Name: "mlflow-tracking-uri", Category: catExport, Sources: envVars("mlflow-tracking-uri"),
			Usage: "after the run, log it to the MLflow tracking server at `URL`: the summary's metrics, the manifest's options as parameters, the run directory's files as artifacts"},
		&cli.StringFlag{Name: "mlflow-experiment", Category: catExport, Sources: envVars("mlflow-experiment"),
			Usage: "the MLflow experiment `NAME` (created when missing; default: the server's default experiment)"},
		&cli.StringFlag{Name: "mlflow-run-name", Category: catExport, Sources: envVars("mlflow-run-name"),
			Usage: "the MLflow run's `NAME` (default: the run directory's name)"},
		&cli.StringFlag{Name: "mlflow-parent-run-id", Category: catExport, Sources: envVars("mlflow-parent-run-id"),
			Usage: "nest the MLflow run under the run `ID`"},
		&cli.StringSliceFlag{Name: "mlflow-tag", Category: catExport, Sources: envVars("mlflow-tag"),
			Usage: "tag the MLflow run with `KEY:VALUE` (repeatable)"},
		&cli.StringSliceFlag{Name: "mlflow-artifact-glob", Category: catExport, Sources: envVars("mlflow-artifact-glob"),
			Usage: "upload the run directory's files matching `GLOB` (repeatable; **/ matches in subdirectories; default: AIPerf's *.json, *.csv, *.jsonl, *.parquet and images)"},
	}
}
