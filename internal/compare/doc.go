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
// A resample of a side draws its runs with replacement (the run-to-run
// variation of replicates), then each drawn run's requests in [Blocks]
// blocks of consecutive requests by send time, circularly, as a count per
// request (a stall of the machine slows requests in a row; drawing them
// one by one would take it for independent luck); a side's value is the
// mean over its runs. A percentile of the resample is read off the run's
// values sorted once, walking the counts, so a resample costs O(n) per
// metric instead of a sort. Every statistic is computed on the resample
// as on the run; a throughput divides the resample's sums by its
// benchmark duration, with the run's send times kept and each slot given
// the response time of the request drawn for it. The draws come from a
// PCG generator seeded by [Config.Seed]: the same runs and seed give the
// same intervals.
//
// # From intervals to verdicts
//
// The intervals are simultaneous: each cuts the same share of resamples
// from its ends, found by bisection so that in Level of the resamples
// every metric lies within its interval at once, which bounds the
// family-wise error of a comparison at 1 − Level. With replicates they
// are widened by √(R/(R−1)) and from the normal's quantile to Student's
// t with Ra + Rb − 2 degrees of freedom (see replicateDF). A change must
// then also pass a noise floor (noiseFloor: --min-effect, a calibration's
// error, and with a single run a side the runs' own read lag and
// lateness), show in [PartsAgreeing] of the [Parts] consecutive parts of
// single runs, and pass what a degraded measurement may account for, or
// it is no difference or [Inconclusive]. docs/design/0015 gives the
// reasons and the measurements.
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
