// Package report builds `reprise report`: one self-contained HTML file of
// plots and tables from one or several run directories, read only through
// [arrowio.Open]. The file embeds its scripts, styles and data (uPlot,
// vendored under assets/ with its licence and pinned SHA-256), so it opens
// offline from disk or a CI artifact.
//
// # What it shows
//
// [Build] writes, for every run (several runs are overlaid, one colour
// each): a headline strip (TTFT, ITL and E2E p50 and p99, output
// tokens/s, requests/s, goodput when an SLO was set, the verdict, with
// error bars from a calibration or from repeated runs, [Options.Repeated]),
// the verdicts (goodput and its SLOs, error rate, lateness budget,
// the exit code they give), the summary table, then any [Section] the
// caller adds ([Options.Sections]: `reprise compare`'s table, a sweep's
// Pareto front), then latency (CDFs on a log axis, percentile bars, TTFT
// against intended send time coloured by error kind, ISL against TTFT, OSL
// against E2E), TTFT and ITL p50/p90/p99 and the error rate per time
// bucket, load over time (intended and achieved rate, requests in
// flight, output tokens/s), truth (schedule lateness and client read lag
// over time, server-minus-expected cached tokens, cache fidelity, client
// against server latency means), server and GPU telemetry on the same time
// axis, errors by kind over time, and the manifest. Warmup is shaded on
// every time axis. Each plot has a one-line explanation under it and
// buttons that save it as PNG or SVG.
//
// # Large runs
//
// Nothing is drawn point by point past a bound, so a report's size and
// drawing time do not grow with the run (docs/format/report.md):
//
//   - CDFs are evaluated exactly (from every value, sorted) on a grid of
//     [CDFPoints] log-spaced latencies shared by all runs;
//   - percentile bars come from the run's summary (engine/summary);
//   - time series are binned in 1 s buckets, narrowed so that a short
//     run has at least [MinBuckets] and widened so that
//     a long one has at most [MaxBuckets];
//   - scatters keep every failed request and an evenly strided sample of
//     the others, at most [Options.MaxPoints] of each per run.
//
// # Performance considerations
//
// Build reads each run's records once and keeps none of them in memory:
// the first pass feeds the summary, finds what the axes need (the time
// span of every run, each latency's range, how many requests each scatter
// samples from) and writes what the charts use of each request (78 bytes)
// to a temporary file; the second pass reads that file back and bins and
// samples with the axes fixed. Memory is the summary's accumulator and
// the charts' bins and samples, whatever the number of requests: a run of
// ten million requests reports in about 250 MB and 40 s of CPU
// (docs/format/report.md).
package report
