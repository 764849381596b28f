// Package dashboard is the full-screen live view of a run (`--ui
// dashboard`): counts, rates, latency quantiles of the last window and of
// the run so far, the server's KV cache and queue, measurement quality and
// sparklines, redrawn from a [Snapshot] at a bounded rate.
//
// The view never touches the run's hot path: [Run] calls the snapshot
// function on its own goroutine at most [DefaultFPS] times a second, and
// the snapshot is built from the same counters the progress line reads.
// [Render] is a pure function of a snapshot and a screen size, so what the
// user sees is tested with fixed snapshots (golden files).
//
// Keys: q or Ctrl-C stops the run (the first press stops sending, the
// second cancels the requests in flight, as the first and second Ctrl-C
// do); p or space pauses and resumes the view (the run goes on).
package dashboard
