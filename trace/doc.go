// Package trace reads LLM-serving traces (Mooncake, Bailian, BurstGPT, Azure,
// Splitwise/Vidur, AIPerf single- and multi-turn) into one request model,
// [Row], streaming and with errors that name the file, line and field.
//
// Everything downstream (analysis, synthesis, the replay schedule, prompt
// synthesis) consumes Rows and never looks at a source format again. The
// semantics of every field per format are specified, as "trace model v1",
// in docs/format/traces.md.
//
// # Reading
//
// [Open] (or [NewReader]) detects the format from the content, or takes
// [Options.Format]; [Reader.Next] yields rows in file order and [ReadAll]
// returns them stably sorted by arrival. gzip and zstd input is
// decompressed transparently. Row errors are [*ParseError] values; with
// [Options.SkipInvalid] they become counted warnings in [ReadStats].
// [Options.Context] stops every read once it is done, and
// [Options.MaxRows] ends a read after that many rows.
//
// A trace too large to hold is validated by [Scan], which reports what
// ReadAll would and keeps nothing, and read again during a run through a
// [Window], a ring of rows filled ahead by its own goroutine.
//
// # Writing
//
// [Writer] writes Mooncake or Bailian JSONL that reads back to the same rows.
//
// # Performance considerations
//
// The Mooncake and Bailian readers use a hand-written JSON scanner
// (encoding/json manages about 0.17M lines/s; the scanner several times
// that, see BenchmarkMooncakeDecode) and parse numbers exactly, without
// float64. Next allocates nothing per plain Mooncake row once its buffers
// have grown (TestNextAllocs): Row.HashIDs and Row.Raw point into buffers
// the Reader reuses, so keep a row across calls only via [Row.Clone].
// Rows with extension keys (messages, payload, …) cost one copy into Raw.
package trace
