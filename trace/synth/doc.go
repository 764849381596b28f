// Package synth makes traces that do not exist yet: it derives new traces
// from real ones ([Derive]: faster, longer prefixes, more tenants, a
// window, a sample) and generates traces from scratch ([Generate]:
// arrival processes, multi-turn sessions, shared-prefix trees, length
// distributions), with targets for prefix-cache stress: an infinite-cache
// hit ratio and a working set. The results are [trace.Row]s that [Write]
// turns into Mooncake or Bailian JSONL; `reprise synthesize` is the
// command line.
//
// Every statistic here uses the definitions of package
// [github.com/reprise-bench/reprise/trace/analyze] (leading-run prefix
// hits, token-weighted, in arrival order); [Measure] runs that analyzer on
// rows exactly as `reprise analyze-trace` runs it on the written file.
//
// # Derive
//
// The multipliers follow AIPerf's trace synthesis (its --synthesis-*
// options) where it is sound; the differences are fixes:
//
//   - Speedup divides offsets and delays exactly (to the nanosecond;
//     AIPerf truncates to whole milliseconds).
//   - Prefix length: AIPerf turns a row's leading run of s shared blocks
//     into ⌈s·p⌉ (p > 1) or max(1, ⌊s·p⌋) (p < 1) blocks, but draws the
//     extra blocks per row, so two rows that shared s blocks do not share
//     the stretched prefix. Here the blocks belong to the nodes of the tree
//     of shared prefixes, so two rows that shared s blocks share exactly
//     the new length of s blocks. A row whose every block is shared and
//     whose last block is partial — where AIPerf computes a negative tail
//     and crashes — keeps its partial last block.
//   - Root multiplier: AIPerf draws a copy per row, which splits the turns
//     of a session across copies; here a session stays in one copy. The
//     expected ceiling after it is [RootMultiplierCeiling].
//   - Max ISL applies after the multipliers, to the lengths that are
//     sent; a dropped row takes the rest of its session with it (a later
//     turn without its predecessor would change meaning).
//   - New hash ids are allocated above the largest input id (never
//     colliding with one), and ids stay chained: an id is always at the
//     same position after the same predecessor.
//
// Window and sample keep or drop whole sessions, never split one; the
// counts of what a window cut are in [DeriveStats].
//
// Settings that decide each row alone, or each session at its first row
// ([DeriveConfig.Streams]), derive a file in arrival order row by row:
// [CanStream] validates it and checks the order, [DeriveTo] streams the
// rows Derive would return, in constant memory.
//
// # Generate
//
// Sessions start by an arrival process of rate [GenerateConfig.Rate]
// (constant, Poisson or gamma gaps, shaped in time by a [RateCurve]: ramps
// and a diurnal sine). A session has a number of turns; turn j > 0 comes a
// think time after turn j−1 (the row's delay). A session may first walk a
// prefix tree: a root (a tenant's system prompt), then one child per level
// (few-shot templates, tool schemas), each level a number of tokens.
//
// Turn 0's prompt is the path's tokens followed by its own ISL draw; turn
// j's prompt is turn j−1's prompt, turn j−1's output tokens and turn j's
// own ISL draw: the context grows. Hash ids follow chained-hash semantics:
// a block is shared exactly when its whole content and everything before
// it is, so turn j's ids are the ids of turn j−1's full blocks followed by
// new ids (turn j−1's partial last block changes content and gets a new
// id), and a prefix level that ends inside a block shares that block only
// with rows on the same path below it.
//
// Output encoding of growing context: the generator builds every row with
// its whole context (the rows [Measure] and the targets see). Bailian
// output keeps it — Bailian rows are cumulative by definition
// (parent_chat_id links the turns, time_to_parent_chat holds the think
// time, timestamp the estimated arrival). Mooncake output is AIPerf's
// mooncake_trace dialect, the only meaning a Mooncake line with a
// session_id has for AIPerf and for reprise's reader ([Incremental]): a
// later turn's input_length and hash_ids are its new tokens only, and the
// replay (AIPerf, or reprise replay --context-mode auto) sends it after
// every earlier prompt and the live response. With responses of exactly
// output_length tokens (--ignore-eos) that is the context measured here;
// [Contexts] rebuilds it from the written rows. analyze-trace on the
// Mooncake file reads each line as written, so its hit ratio for such a
// file describes the lines, not the replay. A later turn's estimated
// arrival, used to order the rows and by analyze-trace, is its
// predecessor's arrival plus the think time (the service time is unknown
// before a replay).
//
// # Targets
//
// Working set: the number of distinct blocks times the block size — the
// KV cache the trace fills, analyze-trace's cache.distinct_blocks ×
// block_size. An LRU cache of at least that many tokens never evicts and
// reaches the infinite-cache ceiling; any smaller cache must evict, and
// how much hit ratio that costs is the LRU curve analyze-trace prints.
// [GenerateConfig.WorkingSet] sets the number of sessions: sessions are
// added, in start order, until the working set is closest to it.
//
// Hit ratio: the infinite-cache token hit ratio (cache.token_hit_ratio).
// It is met by construction, without filtering any row: the prefix length
// (when not given) is the smallest whole number of blocks per level at
// which sessions that all walk the trees reach the target, then the share
// of sessions that walk the trees is bisected (a session walks when its
// own uniform draw is below the share, so the walkers only grow with it).
// An exact model of the analyzer evaluates each candidate in one pass; the
// chosen trace is then measured by the analyzer itself, which must agree
// with the model and be within ±0.02 of the target (±5 % for the working
// set), or Generate fails with the closest value it could reach.
//
// # Agentic tasks
//
// [GenerateAgentic] writes tasks of dependent requests (design 0008) as
// agentic Mooncake rows: a root per task, arriving by a Poisson process,
// and below it a tree of [AgenticConfig.Depth] levels in which every
// request has [AgenticConfig.FanOut] children that wait for it, then for a
// tool time and a think time. A child's prompt is its parent's full
// blocks plus its own draw; a root's starts with one of the shared system
// prompts. analyze-trace's dependencies section measures the shape.
//
// # Determinism
//
// Equal configurations and seeds give equal rows and bytes (same reprise
// version and platform). Every concern draws from its own stream, in
// session order, so that raising the number of sessions keeps the earlier
// sessions as they were, and solving for a target never changes a
// session's arrival, turns, own length draws or prefix path.
package synth
