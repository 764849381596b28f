// Package analyze computes the statistics of `reprise analyze-trace` from a
// stream of [trace.Row]s: arrival pattern, request lengths, the prefix-cache
// ceiling and LRU capacity curve, block popularity skew, reuse time and
// distance, and the statistics AIPerf's `analyze-trace` prints.
//
// Definitions follow shared/reference/kv-cache-stats.md: requests are taken
// in arrival order, a request's prefix hit is the leading run of its hash ids
// already in the cache, ratios are token-weighted unless named otherwise, and
// percentiles use numpy's default linear interpolation.
//
// # Streaming and memory
//
// An [Analyzer] is fed one row at a time in arrival order ([Analyzer.Add])
// and keeps per-block state (last use, reuse count, LRU links) in slices
// indexed by a dense number assigned to each distinct hash id, so its memory
// grows with the number of distinct blocks, not with the number of rows.
// Distributions over rows (lengths, gaps, reuse times and distances) are
// exact histograms: memory grows with the number of distinct values, which
// for integer token lengths is a few thousand entries whatever the row count.
// [AIPerf] computes the file-order statistics of AIPerf's analyzer with
// memory bounded by distinct (position, id) pairs. [File] drives both from a
// trace file in one pass (two if the file is not sorted by time).
//
// [PrefixCache] is the same cache model for one request at a time: the
// engine uses it to predict the cached tokens a server should report.
//
// # Performance considerations
//
// The per-row work is a few map lookups per hash id (interning), array
// updates for each LRU capacity, and histogram increments. On the Mooncake
// conversation trace (24 ids per row) this is far below the cost of decoding
// the JSON line; see BenchmarkAnalyzeMooncake.
package analyze
