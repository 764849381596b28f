// Package analyze computes the statistics of `reprise analyze-trace` from a
// stream of [trace.Row]s: arrival pattern, request lengths, the prefix-cache
// ceiling and LRU capacity curve, block popularity skew, reuse time and
// distance, and the statistics AIPerf's `analyze-trace` prints.
//
// Definitions are in docs/format/analyze-json.md: requests are taken
// in arrival order, a request's prefix hit is the leading run of its hash ids
// already in the cache, ratios are token-weighted unless named otherwise, and
// percentiles use numpy's default linear interpolation.
//
// # Streaming and memory
//
// An [Analyzer] is fed one row at a time in arrival order ([Analyzer.Add])
// and keeps per-block state (last use, reuse count, LRU time) in paged
// arrays indexed by a dense number assigned to each distinct hash id, so its
// memory grows with the number of distinct blocks, not with the number of
// rows.
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
// The cost is per hash id, not per row: interning the id (nothing for ids
// that are their own dense numbers, as Mooncake's are; an array index for
// other small ids, else a map lookup), its block state, its LRU stack
// distance (all capacities at once, see lruStack: a bitmap of last-use
// times and a Fenwick tree, nothing moves when a block is used) and, for
// AIPerf, its prefix-trie node and (position, id) count, plus exact
// histogram increments per row and per run of hits. On the Mooncake
// conversation trace (24 ids per row), on the shared 2-core machine under
// load, the time-order statistics run at about 1.5M rows per CPU second
// (2.4M without LRU capacities), AIPerf's at 2.0M and decoding the JSON at
// 2.7M; the whole analyze-trace loop at about 0.7M. What remains is memory
// bound: a cache miss per block for each per-block structure and per
// histogram counter, spread over megabytes (BenchmarkAnalyzeMooncake). Add
// allocates nothing for a row that brings no new id or value
// (TestAddAllocs).
package analyze
