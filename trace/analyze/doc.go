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
// The cost is per hash id, not per row: interning the id (an array index
// for small dense ids, else a map lookup), its block state, one update of
// the shared LRU recency list (all capacities at once, see multiLRU) and,
// for AIPerf, its prefix-trie node and (position, id) count, plus exact
// histogram increments for each hit. On the Mooncake conversation trace
// (24 ids per row) the time-order statistics run at about 0.7M rows per CPU
// second and AIPerf's at about 1.1M, against 2.3M for decoding the JSON, so
// the statistics, not decoding, bound analyze-trace
// (BenchmarkAnalyzeMooncake). Add allocates nothing for a row that brings
// no new id or value (TestAddAllocs).
package analyze
