package engine

import "github.com/reprise-bench/reprise/engine/record"

// Sink receives a run's records in batches, from one goroutine (the
// engine's collector, never a sender). The collector's queue
// ([SinkQueueBatches]) is the only one between the senders and the sink: a
// call may take as long as the disk needs, and once the queue is full the
// sender that completes a batch waits ([Result.SinkQueue] counts it). The
// sink must not keep a batch after the call returns: the collector reuses
// it. WriteEvents is only called when events are collected. Close
// flushes and completes the files. arrowio.RunWriter implements it, for
// every record format (Parquet, Arrow IPC and JSON Lines).
type Sink interface {
	WriteRequests(batch []record.Request) error
	WriteEvents(batch []record.Event) error
	Close() error
}
