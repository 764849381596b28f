// Package stability is the stability stop of one run (GenAI-Perf's and
// perf_analyzer's --measurement-interval and --stability-percentage): the
// run is measured in windows of a fixed length, and it stops as soon as
// the last [Windows] windows agree, their throughput and their mean
// latency each within the percentage (max / min ≤ 1 + PCT/100, as
// perf_analyzer decides), or when the most windows have passed.
//
// [Stable] is the pure decision, tested with synthetic windows; [Watch]
// turns the run's completed records into windows for replay.Watch and
// reports them as summary.json's run_info.stability. Replay owns time:
// it calls [Watch.Check] at every window's end; nothing here reads a
// clock.
package stability
