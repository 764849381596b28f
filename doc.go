// Package reprise replays LLM-serving traces (or a synthetic load)
// against inference servers with microsecond timing, and writes what it
// measured to a run directory. It is the library under the reprise
// command: every command that runs load goes through [Run], and a
// program that needs a replay calls it the same way.
//
// # Running a replay
//
// Start from [NewOptions], which holds the documented defaults (the
// Default constants), set the server ([Options.URL], [Options.Model]),
// the load ([Options.Trace], or [Options.Synthetic] without a trace) and
// its timing ([Options.Replay], a [replay.Config]), and call [Run]. Run
// validates everything before anything is sent or created and reports
// every problem at once as a [*ConfigError], each a [*FieldError] naming
// the Options field to change by its path ("Output.Format"); it then prepares the trace,
// tokenizer, prompts, endpoint adapter, schedule and telemetry, replays,
// and writes the run directory through [arrowio]: the records (Parquet,
// Arrow or JSON Lines), telemetry tables, manifest.json, summary.json and,
// when asked, AIPerf's export files.
//
// A failed request is data: it is a row of the records, never an error of
// Run. Run's error means the run could not run, or could not be written;
// when it started, the [Result] of what it measured comes with the error.
//
// # Verdicts
//
// [Result.Verdicts] lists every check a completed run failed, each a
// [Verdict] with its numbers, in their order of precedence: [AllFailed],
// [LatenessOverBudget], [ErrorRateExceeded], [SLOFailed], or
// [Interrupted] alone when the run was stopped. Exit codes are the command's business; docs/format/cli.md
// gives the table the reprise command uses.
//
// # Stopping
//
// Cancelling Run's context stops sending: in-flight requests get
// Replay.Grace to finish, then are cancelled and recorded as such, and
// everything is written. Closing [Options.Abort] as well cancels them at
// once.
//
// # Inside a run
//
// Run drives package engine, which puts one request on the wire at a
// time ([engine.Sender.Do]). Around it, this package runs the replay: the
// schedule's dispatcher (package replay) calls one handler per job on
// long-lived sender goroutines; builder goroutines render requests ahead
// of their send time in a lookahead window bounded in count (at least
// twice the senders, default 1024) and in body bytes (16 MiB), and the
// run waits at most 5 s before its time zero for them to fill it; a
// request the lookahead has not reached is built on the send path and
// counted ([Result.InlineBuilds]), as is every later turn of a session
// that grows its history (it needs the previous turn's response, at most
// 1 MiB of which is kept). Finished rows are copied into batches of 512
// (events 8192) under one mutex and handed to one collector goroutine,
// which feeds the summary accumulator and then the record writer; its
// queue of 64 batches is the only one between the senders and the disk,
// so a slow disk delays neither reads nor sends until it is full (then
// the sender completing a batch waits: logged once, counted in
// summary.json's record_writer), and the batches are reused. What the run
// keeps per request is the summary's metric values: exactly for the first
// summary.ExactValues requests (8 bytes per metric each, about 25 MiB at
// most), then a quantile sketch of bounded size per metric. While
// requests are sent the garbage collector's proportional mode is off and
// the memory limit is its only trigger (RATIONALE.md says why).
//
// # Concurrency
//
// Run may be called from several goroutines, each with its own Options
// and run directory; it sets the process's Go memory limit (unless
// GOMEMLIMIT is set) and, with [Options.Nice], the nice value of the
// process's threads, both of which are process-wide.
package reprise
