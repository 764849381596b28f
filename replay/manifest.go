package replay

import "time"

// Manifest returns c as a run manifest records it: each setting under its
// flag's name in snake_case, durations as Go duration strings ("1m30s").
// Zero values are kept, so a manifest always shows every setting; an unset
// Mode is "auto" (the mode it picked is the manifest's top-level "mode").
func (c Config) Manifest() map[string]any {
	var shard, startAt any // null when not set
	if c.Shard.Sharded() {
		shard = map[string]int{"index": c.Shard.Index, "count": c.Shard.Count}
	}
	if !c.StartAt.IsZero() {
		startAt = c.StartAt.UTC().Format(time.RFC3339Nano)
	}
	mode := string(c.Mode)
	if c.Mode == ModeAuto {
		mode = "auto"
	}
	return map[string]any{
		"mode":              mode,
		"auto_offset":       c.AutoOffset,
		"start_offset":      c.StartOffset.String(),
		"end_offset":        c.EndOffset.String(),
		"speedup":           c.Speedup,
		"request_rate":      c.RequestRate,
		"arrival":           string(c.Arrival),
		"smoothness":        c.Smoothness,
		"concurrency":       c.Concurrency,
		"rate_ramp":         c.RateRamp.String(),
		"concurrency_ramp":  c.ConcurrencyRamp.String(),
		"user_centric_rate": c.UserCentricRate,
		"num_users":         c.NumUsers,
		"request_count":     c.RequestCount,
		"duration":          c.Duration.String(),
		"grace":             c.Grace.String(),
		"warmup_requests":   c.WarmupRequests,
		"warmup_duration":   c.WarmupDuration.String(),
		"late":              string(c.Late),
		"late_threshold":    c.LateThreshold.String(),
		"seed":              c.Seed,
		"max_lateness":      c.MaxLateness.String(),
		"senders":           c.Senders,
		"shard":             shard,
		"start_at":          startAt,
	}
}
