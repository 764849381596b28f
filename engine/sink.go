package engine

import "github.com/reprise-bench/reprise/engine/record"

// Sink receives a run's records in batches, from one goroutine (the
// engine's collector, never a sender). The sink owns each batch after the
// call: the engine never touches it again. WriteEvents is only called when
// events are collected. Close flushes and completes the files.
// arrowio.RunWriter implements it, for every record format (Parquet, Arrow
// IPC and JSON Lines).
type Sink interface {
	WriteRequests(batch []record.Request) error
	WriteEvents(batch []record.Event) error
	Close() error
}
