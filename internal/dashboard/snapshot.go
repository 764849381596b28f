package dashboard

import "time"

// State is where a run is in its life, as the dashboard shows it.
type State uint8

// The states of a run.
const (
	// Running: sending as the schedule says.
	Running State = iota
	// Stopping: sending stopped (a first q or Ctrl-C); requests in flight
	// get the grace period.
	Stopping
	// Aborting: requests in flight are being cancelled (a second press).
	Aborting
	// Draining: every planned request was sent; the last ones are in
	// flight.
	Draining
	// Finished: the run is over; the run column holds the summary's
	// numbers.
	Finished
	// Interrupted: the run is over, stopped early (a stop key or Ctrl-C);
	// the run column holds the summary's numbers of what it measured.
	Interrupted
)

// Over reports whether the run is over: Finished or Interrupted.
func (s State) Over() bool { return s == Finished || s == Interrupted }

func (s State) String() string {
	switch s {
	case Stopping:
		return "stopping: no new requests"
	case Aborting:
		return "cancelling in flight"
	case Draining:
		return "sending done"
	case Finished:
		return "finished"
	case Interrupted:
		return "interrupted"
	}
	return "running"
}

// Snapshot is what the dashboard shows at one instant. It is plain data:
// the caller builds a fresh one per call of the snapshot function and
// hands it over (the dashboard keeps it and never changes it).
//
// Counts are requests of the run (warmup included; with fan-out, one per
// job). A metric or rate that is not known is its zero value (a
// [Quantiles] with N 0, a negative rate or usage), shown as "–".
type Snapshot struct {
	// Title names the run: what is replayed against what.
	Title string
	State State
	// Elapsed is the time since the run's start. ETA is the time left by
	// the schedule, negative when unknown.
	Elapsed, ETA time.Duration
	// Planned is the number of requests planned, negative when unknown
	// (a load bounded by time alone).
	Planned int64

	Sent, Done, InFlight, Failed int64
	// Errors are the failed requests by kind, most first.
	Errors []KindCount

	// Window is the length of the last window the Window quantiles and
	// rates are over.
	Window time.Duration
	// Intended and Achieved are the request rates (requests/s) the
	// schedule asked for and the client sent, over the last window and
	// over the run; OutputTokens the output tokens/s of the requests that
	// ended.
	Intended, Achieved, OutputTokens Rate

	// Metrics are the latency rows, in display order (TTFT, TTFO, ITL,
	// latency, lateness, read lag).
	Metrics []Metric

	// Server is the last scrape of the server's /metrics (nil: not
	// scraped).
	Server *Server
	// Quality is the measurement-quality verdict so far.
	Quality Quality
	// Series are the sparklines, oldest point first, one point per
	// window step.
	Series []Series
}

// KindCount is the number of failed requests of one error kind.
type KindCount struct {
	Kind  string
	Count int64
}

// Rate is a per-second rate over the last window and over the run;
// negative is unknown.
type Rate struct {
	Window, Run float64
}

// Metric is one latency row: its quantiles over the last window and over
// the run so far.
type Metric struct {
	Name        string
	Window, Run Quantiles
}

// Quantiles are the p50, p90 and p99 of N values; N 0 means none.
type Quantiles struct {
	N             int64
	P50, P90, P99 time.Duration
}

// Server is what the last scrape of the server said. A gauge the server
// does not expose is negative.
type Server struct {
	// Target is the scraped URL.
	Target string
	// KVUsage is the KV-cache usage, 0..1.
	KVUsage float64
	// Running and Waiting are the requests being processed and queued.
	Running, Waiting float64
	// Age is how long ago the scrape was read; Up whether it succeeded.
	Age time.Duration
	Up  bool
}

// Quality is the measurement-quality verdict: "good" or "degraded" (or
// "" before anything was measured), with the reasons of a degraded one.
type Quality struct {
	Verdict string
	Reasons []string
}

// Series is one sparkline: its name, a unit for its last value ("/s" a
// rate, "ms", "%", "n" a count, "" a plain number), and its points.
type Series struct {
	Name   string
	Unit   string
	Points []float64
}
