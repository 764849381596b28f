// Package livemetrics serves a run's own metrics while it runs, in
// Prometheus's text exposition format, for Prometheus and Grafana
// (--metrics-addr). docs/format/live-metrics.md is the contract: every
// metric's name, type, unit and labels, with a version.
//
// A [Metrics] holds the run's histograms, counters and gauges in its own
// registry (no global one). [Metrics.Observe] takes a batch of finished
// records, where the run's collector already hands them to the summary,
// never on the dispatcher or a sender; in-flight and intended-rate gauges
// are read from the run's own counters when a scrape asks. A [Server]
// listens before the run starts (so that a port in use is a setup error)
// and, after the run, lingers until a scrape has seen the final values
// ([Server.Linger]).
//
// # Performance considerations
//
// Every label set is resolved once, in [New]: per record, Observe makes
// at most eight observations (atomic additions, no map lookups) and
// allocates nothing
// (TestObserveAllocs; BenchmarkObserve measures the cost per record).
// It runs on the collector's goroutine, which hands records to the disk
// in batches, so the senders and the dispatcher never wait for it.
package livemetrics
