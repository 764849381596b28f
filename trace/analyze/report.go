package analyze

// Schema is the version tag of the JSON document of `reprise analyze-trace
// --json`, specified in docs/format/analyze-json.md. It changes whenever a
// field is renamed or removed or its meaning changes.
const Schema = "reprise.analyze/v1"

// Report is everything analyze-trace computes for one trace. Its JSON form
// is the versioned document of docs/format/analyze-json.md. Time-order
// sections (arrivals, lengths, cache) are token-weighted where they are
// ratios; the AIPerf section uses AIPerf's file-order, unweighted
// definitions.
type Report struct {
	Schema string  `json:"schema"`
	Source *Source `json:"source,omitempty"`

	// Rows is the number of rows analysed.
	Rows int64 `json:"rows"`
	// SpanSeconds is the last arrival minus the first, in seconds.
	SpanSeconds float64 `json:"span_seconds"`

	Arrivals Arrivals `json:"arrivals"`
	// ISL and OSL are input and output lengths in tokens over all rows.
	ISL     Stats     `json:"isl"`
	OSL     Stats     `json:"osl"`
	Lengths Lengths   `json:"lengths"`
	Session *Sessions `json:"sessions,omitempty"`
	// Cache is nil when no row carries hash ids.
	Cache *Cache `json:"cache,omitempty"`
	// Dependencies describes dependent requests (wait_for); nil without.
	Dependencies *Dependencies `json:"dependencies,omitempty"`
	// Media is nil when no row carries images, audio or video.
	Media *Media `json:"media,omitempty"`
	// AIPerf is nil when the report was built without the file-order pass.
	AIPerf *AIPerfStats `json:"aiperf,omitempty"`
}

// Source identifies the analysed input. It is filled by [File].
type Source struct {
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	Format    string `json:"format"`
	BlockSize int    `json:"block_size"`
	RowsRead  int64  `json:"rows_read"`
	RowsKept  int64  `json:"rows_kept"`
	// Dropped counts rows the reader dropped, by reason.
	Dropped map[string]int64 `json:"dropped,omitempty"`
	// Sorted is true when the file was not in time order and was sorted
	// (stably) before the time-order statistics.
	Sorted bool `json:"sorted"`
}

// Arrivals describes when requests arrive, in time order.
type Arrivals struct {
	// MeanRate is rows / span in requests per second.
	MeanRate float64 `json:"mean_rate_per_second"`
	// Peak1s is the most rows in one whole-second bucket of the offset
	// from the first row.
	Peak1s int64 `json:"peak_1s"`
	// Peak1min is the most rows in one whole-minute bucket; Peak1minRate
	// is that divided by 60.
	Peak1min     int64   `json:"peak_1min"`
	Peak1minRate float64 `json:"peak_1min_per_second"`
	// Gaps are the inter-arrival times between consecutive rows, seconds.
	Gaps Stats `json:"gap_seconds"`
	// GapCV is the population std of the gaps over their mean.
	GapCV float64 `json:"gap_cv"`
	// ZeroGapShare is the fraction of gaps that are exactly 0.
	ZeroGapShare       float64 `json:"zero_gap_share"`
	DistinctTimestamps int64   `json:"distinct_timestamps"`
	// TimedByDelay counts rows with no timestamp, placed at their
	// session's previous arrival plus their delay (a lower bound: the
	// response time of the previous turn is unknown before a replay).
	TimedByDelay int64 `json:"rows_timed_by_delay"`
}

// Lengths holds token totals and threshold counts over all rows.
type Lengths struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// ISLOver8k etc. count rows with more than 8,192 / 32,768 / 131,072
	// input tokens.
	ISLOver8k   int64 `json:"isl_over_8k"`
	ISLOver32k  int64 `json:"isl_over_32k"`
	ISLOver128k int64 `json:"isl_over_128k"`
	// OSLAtMost3 counts rows with at most 3 output tokens (ITL is barely
	// defined for them).
	OSLAtMost3 int64 `json:"osl_le_3"`
	// OSLUnknown counts rows without an output length (a Mooncake or
	// AIPerf row without output_length): they are left out of OSL,
	// OutputTokens and OSLAtMost3, not counted as 0.
	OSLUnknown int64 `json:"osl_unknown"`
}

// Sessions describes multi-turn structure; nil when no row has a session.
type Sessions struct {
	Sessions int64 `json:"sessions"`
	// RowsInSessions counts rows that belong to a session.
	RowsInSessions int64 `json:"rows_in_sessions"`
	// TurnsPerSession is the distribution of rows per session.
	TurnsPerSession Stats `json:"turns_per_session"`
}

// Cache holds the prefix-cache statistics (docs/format/analyze-json.md), over the
// rows that carry hash ids, in time order.
type Cache struct {
	BlockSize      int   `json:"block_size"`
	RowsWithIDs    int64 `json:"rows_with_ids"`
	DistinctBlocks int64 `json:"distinct_blocks"`
	// TotalBlocks is Σ ids over rows; InputTokens is Σ input tokens of the
	// rows with ids.
	TotalBlocks int64 `json:"total_blocks"`
	InputTokens int64 `json:"input_tokens"`
	// HitTokens and HitBlocks are the infinite-cache leading-run hits.
	HitTokens int64 `json:"hit_tokens"`
	HitBlocks int64 `json:"hit_blocks"`
	// TokenHitRatio = HitTokens / InputTokens; BlockHitRatio =
	// HitBlocks / TotalBlocks: the infinite-cache ceiling.
	TokenHitRatio float64 `json:"token_hit_ratio"`
	BlockHitRatio float64 `json:"block_hit_ratio"`
	// IdealSpeedup is 1/(1−TokenHitRatio); null when the ratio is 1.
	IdealSpeedup *float64 `json:"ideal_speedup"`

	// LRU is the capacity curve, one point per configured capacity.
	LRU []LRUPoint `json:"lru"`

	// BlocksReused counts distinct blocks hit at least once.
	BlocksReused int64 `json:"blocks_reused"`
	// Skew is the share of all reuse hits owned by the most reused blocks.
	Skew []SkewPoint `json:"skew"`
	// ReuseTime is the time since the block's previous use, per hit.
	ReuseTime ReuseTime `json:"reuse_time"`
	// ReuseDistance is the number of requests since the block's previous
	// use (index difference in arrival order), per hit.
	ReuseDistance Stats `json:"reuse_distance_requests"`

	// PrefixRoots counts distinct first ids; MaxDepth and MeanDepth are
	// the ids per row (the depth of the prefix tree a row walks).
	PrefixRoots int64   `json:"prefix_roots"`
	MaxDepth    int64   `json:"max_depth"`
	MeanDepth   float64 `json:"mean_depth"`

	// ByKind and ByTurn split the hits by the row's Kind (Bailian type)
	// and turn (named 1-based: "1" is a session's first turn, "10+" the
	// tenth and later); omitted when the trace has no kinds or turns.
	ByKind []Group `json:"by_kind,omitempty"`
	ByTurn []Group `json:"by_turn,omitempty"`
}

// LRUPoint is the LRU cache at one capacity.
type LRUPoint struct {
	CapacityTokens int64   `json:"capacity_tokens"`
	CapacityBlocks int64   `json:"capacity_blocks"`
	TokenHitRatio  float64 `json:"token_hit_ratio"`
	BlockHitRatio  float64 `json:"block_hit_ratio"`
	// FractionOfCeiling is the LRU token hit ratio over the
	// infinite-cache one (0 when the ceiling is 0).
	FractionOfCeiling float64  `json:"fraction_of_ceiling"`
	IdealSpeedup      *float64 `json:"ideal_speedup"`
}

// SkewPoint is the share of reuse hits owned by the top Fraction of
// distinct blocks (Blocks = round(Fraction·distinct) blocks).
type SkewPoint struct {
	Fraction float64 `json:"top_fraction"`
	Blocks   int64   `json:"blocks"`
	Share    float64 `json:"share"`
}

// ReuseTime is the reuse-time distribution in seconds, with the share of
// hits within 10 s, 60 s and 600 s.
type ReuseTime struct {
	Stats
	Within10s  float64 `json:"within_10s"`
	Within60s  float64 `json:"within_60s"`
	Within600s float64 `json:"within_600s"`
}

// Group is the infinite-cache hits of one kind or turn.
type Group struct {
	Name        string `json:"name"`
	Rows        int64  `json:"rows"`
	InputTokens int64  `json:"input_tokens"`
	HitTokens   int64  `json:"hit_tokens"`
	// TokenHitRatio = HitTokens / InputTokens; HitShare is this group's
	// share of all hit tokens.
	TokenHitRatio float64 `json:"token_hit_ratio"`
	HitShare      float64 `json:"hit_share"`
}

// AIPerfStats are the statistics of AIPerf's `analyze-trace`, under its
// field names and definitions (docs/format/analyze-json.md): file order,
// unweighted per-line hit rates, fixed block size.
type AIPerfStats struct {
	TotalRequests    int64        `json:"total_requests"`
	UniquePrefixes   int64        `json:"unique_prefixes"`
	NumPrefixGroups  int64        `json:"num_prefix_groups"`
	CacheHitRate     float64      `json:"cache_hit_rate"`
	MinISL           int64        `json:"min_isl"`
	MaxISL           int64        `json:"max_isl"`
	AvgISL           float64      `json:"avg_isl"`
	MinOSL           int64        `json:"min_osl"`
	MaxOSL           int64        `json:"max_osl"`
	AvgOSL           float64      `json:"avg_osl"`
	PrefixReuseRatio float64      `json:"prefix_reuse_ratio"`
	ISLStats         *MetricStats `json:"isl_stats"`
	OSLStats         *MetricStats `json:"osl_stats"`
	ContextStats     *MetricStats `json:"context_length_stats"`
	UniquePromptStat *MetricStats `json:"unique_prompt_length_stats"`
	HitRateStats     *MetricStats `json:"hit_rate_stats"`
}

// MetricStats is AIPerf's summary of one series; nil (JSON null) for an
// empty series.
type MetricStats struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"std_dev"`
	Min    float64 `json:"min"`
	P25    float64 `json:"p25"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	Max    float64 `json:"max"`
}

func metricStats(s sorted) *MetricStats {
	if s.n == 0 {
		return nil
	}
	st := s.stats(1)
	return &MetricStats{Mean: st.Mean, StdDev: st.Std, Min: st.Min, P25: st.P25, Median: st.P50, P75: st.P75, Max: st.Max}
}

// speedup returns 1/(1−r), or nil when r ≥ 1.
func speedup(r float64) *float64 {
	if r >= 1 {
		return nil
	}
	s := 1 / (1 - r)
	return &s
}
