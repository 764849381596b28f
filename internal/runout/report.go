package runout

import (
	"fmt"
	"io"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
)

// Report writes what a command prints when a run has ended: unless quiet,
// the summary table, the dispatcher's line, the notes (record writer,
// inline builds, connections closed, read lag) and the results directory
// on stderr; when quiet, the results directory on stdout (dir=$(reprise
// replay -q …)) and a record writer's loss on stderr. The notes that
// matter with --quiet (an export skipped, a run that was all warmup) go to
// stderr either way.
func Report(stdout, stderr io.Writer, res *reprise.Result, quiet bool) {
	if res.AIPerfSkipped {
		// Worth a line with --quiet.
		fmt.Fprintf(stderr, "reprise: note: --export aiperf skipped (interrupted twice); reprise summarize --export aiperf %s writes it\n", res.Dir)
	}
	writer := res.Writer
	if !quiet {
		res.Summary.WriteTable(stderr)
		if res.Summary.Options.HTTPTiming {
			res.Summary.WriteHTTPTable(stderr)
		}
		st := res.Stats
		fmt.Fprintf(stderr, "%-34s late %d, waited for a sender %d, shifted %d, skipped %d; p99 %v; stop: %s\n",
			"Dispatcher", st.Late, st.Waited, st.Shifted, st.Skipped, st.Lateness.P99, st.StopReason)
		fmt.Fprint(stderr, WriterNote(writer))
		if res.InlineBuilds > 0 {
			fmt.Fprintf(stderr, "note: %d requests were built on the send path (lookahead behind)\n", res.InlineBuilds)
		}
		if res.ClosesAfterStream {
			fmt.Fprintf(stderr, "note: the server closes the connection after every streamed response; once that was seen, streams were sent with Connection: close\n")
		}
		if n := ReadLagNote(res.Summary); n != "" {
			fmt.Fprintln(stderr, n)
		}
		fmt.Fprintf(stderr, "results: %s\n", res.Dir)
	} else {
		if writer.Dropped > 0 || writer.Error != "" {
			fmt.Fprint(stderr, WriterNote(writer)) // lost rows are worth a line even with --quiet
		}
		fmt.Fprintln(stdout, res.Dir) // where the results are: dir=$(reprise replay -q …)
	}
	if s := res.Summary; s.WarmupCount > 0 && s.RequestCount+s.ErrorRequestCount == 0 {
		// Worth a line even with --quiet: the summary is empty.
		fmt.Fprintf(stderr, "reprise: note: all %d requests were warmup, so nothing was measured; lower --warmup-requests or --warmup-duration\n", s.WarmupCount)
	}
}

// WriterNote returns the line to print when the record writer had to wait
// or dropped rows, "" when it kept up (or w is nil).
func WriterNote(w *arrowio.WriterReport) string {
	if w == nil || w.Waits == 0 && w.Dropped == 0 && w.Error == "" {
		return ""
	}
	if w.Error != "" {
		are := "are"
		if w.Dropped == 1 {
			are = "is"
		}
		return fmt.Sprintf("note: the record writer failed (%s): the run was stopped; %s %s missing from the record files\n",
			w.Error, w.Missing(), are)
	}
	s := "note: the disk did not keep up"
	if w.Waits > 0 {
		s += fmt.Sprintf(": %d waits totalling %v (up to %d batches queued): senders waited for the record writer; "+
			"check schedule_lateness", w.Waits, time.Duration(w.WaitNS).Round(time.Microsecond), w.MaxQueuedBatches)
	}
	if w.Dropped > 0 {
		were := "were dropped and are"
		if w.Dropped == 1 {
			were = "was dropped and is"
		}
		s += fmt.Sprintf("; %s %s missing from the record files", w.Missing(), were)
	}
	return s + "\n"
}

// ReadLagNote warns when at least a tenth of the requests had a read that
// waited in the socket longer than the median gap between tokens: tokens
// that waited together were read together and share the later one's
// arrival time (the kernel keeps one time per read), so first tokens come
// out late and gaps short. Empty otherwise.
func ReadLagNote(s *summary.Summary) string {
	lag, itl := s.Metrics["client_read_lag"], s.Metrics["inter_token_latency"]
	if lag == nil || itl == nil || itl.P50 <= 0 || lag.P90 <= itl.P50 {
		return ""
	}
	return fmt.Sprintf("note: in over 10%% of requests a read waited longer (client read lag p90 %.2f ms) than the median gap between tokens (%.2f ms):\n"+
		"      tokens that waited together were stamped together, at the later arrival (read_lag_ns in the records says which requests)", lag.P90, itl.P50)
}
