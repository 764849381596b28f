// Package adaptive is the controller of single-run adaptive scaling
// (AIPerf's --adaptive-scale): during one run it raises the closed-loop
// concurrency while every SLA holds over each assessment window, backs
// off when one is violated, and holds the highest setting that held for
// the sustain duration (docs/design/0032-adaptive-scale.md).
//
// The package has three parts, each usable alone:
//
//   - [Controller] is the pure decision: a window's [Verdict] in, the
//     next setting out. It is tested with synthetic windows.
//   - [Meter] turns the run's completed records into a [Window] of
//     metrics, computed by engine/summary as the run's own summary is.
//   - [Run] joins them for replay.Adaptive and writes the two artifacts,
//     adaptive_scale_events.jsonl and adaptive_scale_summary.json
//     (docs/format/adaptive-scale.md).
//
// Replay owns time: it calls [Run.Assess] every period and applies the
// setting it returns; nothing here reads a clock.
package adaptive
