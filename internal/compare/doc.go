// Package compare sets runs side by side: for every headline metric
// (TTFT, TTFO, ITL and E2E at p50, p90 and p99, the throughputs, goodput,
// the error rate and the prefix-cache hit ratio) it gives the difference
// B−A, absolute and relative, a bootstrap confidence interval of that
// difference, and a verdict: better, worse, or no significant difference
// at the chosen level, in the metric's good direction (lower latency,
// higher throughput).
//
// Runs are read only through arrowio.Open ([Load]); per-request values
// come from summary.EachValue and goodness from summary.Good, so a
// metric's point estimate is the number summary.json holds for it.
//
// # Pairing
//
// When both sides replayed the same trace (equal trace_sha256 in their
// manifests), requests are paired by trace row; two targets of one
// fan-out run ([LoadTarget]) are paired by request, each trace request
// having gone to both at the same instant. The bootstrap resamples pairs: each resample draws the
// same rows for both sides, so what both sides share (a row's prompt
// length, its place in the schedule) cancels out of the difference and
// the interval is tighter than that of two independent samples.
// Otherwise each side is resampled on its own.
//
// # The bootstrap
//
// A resample draws n requests with replacement (n the side's request
// count, or the number of pairs), as a count per request; a percentile of
// the resample is read off the side's values sorted once, walking the
// counts, so a resample costs O(n) per metric instead of a sort.
// Every statistic is computed on the resample as on the run; a
// throughput divides the resample's sums by its benchmark duration, with
// the run's send times kept and each slot given the response time of the
// request drawn for it. The interval is the percentile interval of the
// resampled differences (for throughputs, its union with the basic
// interval; see RATIONALE.md). The draws come from a PCG generator seeded by
// [Config.Seed]: the same runs and seed give the same intervals.
//
// Each metric is tested on its own at [Config.Level]; across the ~20
// metrics of a table, one "significant" difference at 95 % is expected by
// chance alone now and then. Percentiles in the tail (p99) of small runs
// rest on a handful of requests and their intervals are wide or, below
// about 100 requests, unreliable.
//
// # Comparability
//
// [Result.Warnings] says why two runs may not be comparable: different
// traces, models, input length distributions (a two-sample
// Kolmogorov–Smirnov test at 0.1 %) or client hosts, and a run whose p99
// schedule lateness passed its --max-lateness budget, whose client read
// lag exceeded the gap between tokens (summary.json's
// measurement_quality, where the run has one, decides these), and a run
// with several targets read whole.
package compare
