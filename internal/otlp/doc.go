// Package otlp pushes a run's live metrics to an OpenTelemetry collector
// over OTLP/HTTP with the JSON encoding (--otel-url): the same
// Prometheus registry that --metrics-addr serves for a scrape, read with
// Gather at each push, so the hot path pays nothing more than the
// scrape's own counters.
//
// [Encode] turns gathered metric families into one
// ExportMetricsServiceRequest as the OTLP specification's JSON mapping
// spells it (lowerCamelCase fields, 64-bit integers as decimal strings,
// enums as numbers): counters are cumulative monotonic sums, gauges
// gauges, histograms explicit-bucket histograms (Prometheus's cumulative
// buckets turned into per-bucket counts), summaries summaries. A
// [Pusher] posts it every interval and once more at the end; a collector
// that does not answer is logged once and never stops or slows the run.
package otlp
