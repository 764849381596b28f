// Package sweep runs a replay at many loads and finds the operating point:
// a grid over one or two replay settings ([Run] with [Config.Axes]), a
// search for the largest load that meets the goodput SLOs
// ([Config.Find]), and repeated runs of one load with confidence
// intervals across them ([Repeat]).
//
// Every point is a full run directory (written by reprise.Run, read back
// through arrowio.Open) under one sweep directory, beside sweep.json (the
// plan, each point's status and row, the stops, the Pareto front and its
// knee, the search's answer) and sweep.parquet (the table). A point whose
// directory holds a complete run is read, not run again, so running the
// same plan again resumes an interrupted sweep, and the table of a
// resumed sweep is the table of a straight one. The files are specified
// in docs/format/sweep.md; the design in docs/design/0010-sweep.md.
//
// # Stop conditions
//
// After each point the sweep stops when the point's error rate is above
// [StopConfig.MaxErrorRate], when the point is saturated (see
// [Saturation]: completions fall behind arrivals, the backlog grows, or
// TTFT rises through the point), or when the SLOs failed at
// [StopConfig.SLOFailures] consecutive points.
//
// # Boundary search
//
// The search brackets the boundary by multiplying the load by
// [FindConfig.Factor] until the SLOs flip, then bisects the bracket until
// it is no wider than [FindConfig.Precision]. It measures the server, not
// the client: a probe counts only when the client kept its schedule
// ([Validity]; an invalid probe is re-run, then the search stops as
// [Found.Unmeasurable]), a saturated probe fails, probes are long enough
// for a growing queue to show, and the bracket's ends are confirmed (the
// rules are [FindConfig]'s). Each probe's good fraction has a Wilson
// score interval; the answer is the largest load that passed below the
// lowest that failed, the bracket it lies in, whether the two ends of the
// bracket can be told apart at all, and how many probes were valid,
// invalid, saturated and re-probed.
package sweep
