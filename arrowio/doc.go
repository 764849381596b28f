// Package arrowio owns a run directory: it writes every file of it and
// reads them back. The tables are one row per request (records), one row
// per response event (events), and the telemetry tables (server metrics,
// GPU samples), as Parquet (default) or Arrow IPC files that DuckDB,
// pandas and Polars load directly, or as JSON Lines written from the same
// Arrow records (the same columns and nulls by construction); beside them
// manifest.json, summary.json and the AIPerf exports.
//
// The columns and their versions are specified in docs/format/records.md;
// the schema version is stored in every file's key-value metadata
// (reprise.schema=records/v2.1, events/v1).
//
// # The run directory
//
// [Create] makes a run directory ready (it refuses a non-empty one, or,
// asked to, clears an earlier run from it, never files a run does not
// write; or it picks a free name) and returns a [Run]: [Run.Records] is
// the run's record sink, [Run.ServerMetrics] and [Run.GPU] the telemetry
// tables, [Run.WriteManifest] and [Run.WriteSummary] write manifest.json
// and summary.json atomically, and [Run.ExportAIPerf] writes AIPerf's
// files. The exports compute nothing: every statistic comes from
// engine/summary (summary.EachValue per request), renamed and
// reshaped, so they agree with summary.json by construction.
//
// # Writing
//
// [RunWriter] is the run's record sink, and has no queue of its own: the
// run's collector (package reprise) is the one queue between the senders and the disk,
// and its goroutine calls [RunWriter.WriteRequests] and
// [RunWriter.WriteEvents], which append the rows to explicit column
// builders, flush a row group every [Config.RowGroupRows] rows and roll to
// a new part file every [Config.PartRows] rows or [Config.PartInterval]
// (a ticker of the writer's completes parts on time when no rows come), so
// memory stays bounded and a crash loses at most the part being written:
// a row is readable from disk, even after kill -9, within PartInterval
// (default 5 s) of being written, or PartRows rows, whichever comes
// first. Parts are written under a ".tmp" name and renamed when complete:
// every file without ".tmp" is a complete, valid file. A table that
// cannot be written (a full disk) calls [Config.OnError] at once, with an
// error naming the table and the file, discards the file being written
// and keeps the complete ones; later rows are dropped and counted.
//
// [TableWriter] writes any Arrow schema the same way (parts or a single
// file, Parquet or Arrow IPC, or one JSON Lines file); the telemetry tables
// use it.
//
// # Reading
//
// [Open] reads a run directory back as a [RunReader]: its manifest,
// summary.json, the settings its summary was computed with
// ([RunReader.Settings]), and every table as an iterator
// ([RunReader.Requests], [RunReader.Events], [RunReader.MetricSamples],
// [RunReader.GPUSamples]), whatever the format, parts or one file. The
// iterators hold one record batch at a time (a Parquet row group, at most
// 64 Ki rows otherwise), so memory does not grow with the run.
// [RunReader.Summarize] recomputes the run's summary, telemetry included,
// from the tables: `reprise summarize` prints the run's summary.json byte
// for byte. [ReadRequests] and friends read a whole table into memory;
// [ReadTable] streams any table's Arrow records.
//
// # Performance considerations
//
// Appending a row costs a few nanoseconds per column and allocates nothing
// (TestAppendRequestAllocs); the builders reserve a full row group up front,
// so a write that completes no row group allocates nothing either
// (TestWriteRequestsAllocs). Encoding happens on the caller's goroutine
// (the run's collector, never a sender): about 2 µs of CPU per request
// row and 0.2 µs per event row, with Arrow buffers recycled between row
// groups and a pooled zstd encoder (arrow v17 builds one per page
// otherwise). Peak heap is about 100 MiB with the default 32,768-row row
// groups.
package arrowio
