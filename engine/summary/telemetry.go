package summary

import (
	"fmt"
	"math"
	"strings"
)

// AttachTelemetry sets the run's telemetry, and each target's (a run
// with several): the servers whose /metrics page is the target's, so
// that every server-against-client view pairs a server with the
// requests sent to it.
func (s *Summary) AttachTelemetry(t *Telemetry) {
	s.Telemetry = t
	if t == nil {
		return
	}
	for _, sub := range s.Targets {
		st := &Telemetry{GPU: t.GPU}
		for _, sv := range t.Servers {
			if u, err := MetricsURL(sub.Run.URL); err == nil && u == sv.Target {
				st.Servers = append(st.Servers, sv)
			}
		}
		sub.Telemetry = st
	}
}

// clientOf is the summary whose client numbers pair with server sv: the
// target's whose /metrics page sv is, in a run with several, else s.
func (s *Summary) clientOf(sv ServerSummary) *Summary {
	for _, sub := range s.Targets {
		if u, err := MetricsURL(sub.Run.URL); err == nil && u == sv.Target {
			return sub
		}
	}
	return s
}

// telemetryJSON adds the client-vs-server comparisons to the JSON object:
// for each server latency histogram, the client's mean, the server's and
// the difference. Means are compared because the server's mean is exact
// (_sum/_count) while its percentiles are only as precise as its buckets.
// The server's histogram is its own view, not a reference: it records
// what the server chose to observe (a simulator records its configured
// delays, not the times it achieved), so the difference is not only
// network and client overhead.
func (s *Summary) telemetryJSON() map[string]any {
	t := s.Telemetry
	out := map[string]any{}
	if t.GPU != nil {
		out["gpu"] = t.GPU
	}
	var servers []map[string]any
	for _, sv := range t.Servers {
		m := map[string]any{"server": sv}
		cmp := map[string]any{}
		cl := s.clientOf(sv)
		for _, c := range cl.clientVsServer(sv) {
			cmp[c.tag] = map[string]any{"client_mean_ms": c.client, "server_mean_ms": c.server,
				"client_minus_server_ms": c.client - c.server, "server_metric": c.metric}
		}
		if len(cmp) > 0 {
			m["client_vs_server_mean"] = cmp
		}
		if sv.PrefixCacheHitRatio != nil && cl.TotalISL > 0 && cl.ExpectedCachedTokens > 0 {
			m["expected_prefix_cache_hit_ratio"] = float64(cl.ExpectedCachedTokens) / float64(cl.TotalISL)
		}
		servers = append(servers, m)
	}
	if servers != nil {
		out["servers"] = servers
	}
	return out
}

type latencyPair struct {
	tag, metric    string
	client, server float64
}

// clientVsServer pairs the client's mean TTFT, ITL and latency with the
// server's for the same metric, where both exist.
func (s *Summary) clientVsServer(sv ServerSummary) []latencyPair {
	var out []latencyPair
	for _, p := range []struct {
		tag string
		h   *HistogramStats
	}{{"time_to_first_token", sv.TTFT}, {"inter_token_latency", sv.ITL}, {"request_latency", sv.E2E}} {
		st, ok := s.Metrics[p.tag]
		if !ok || p.h == nil || p.h.Count == 0 || math.IsNaN(p.h.MeanMS) {
			continue
		}
		out = append(out, latencyPair{p.tag, p.h.Metric, st.Avg, p.h.MeanMS})
	}
	return out
}

// writeTelemetry appends the server and GPU lines to the console summary.
func (s *Summary) writeTelemetry(b *strings.Builder) {
	line := func(k, v string) { fmt.Fprintf(b, "%-34s %s\n", k, v) }
	gauge := func(g *GaugeStats, scale float64) string {
		return fmt.Sprintf("mean %s, max %s", num(g.Mean*scale), num(g.Max*scale))
	}
	for _, sv := range s.Telemetry.Servers {
		name := sv.Family
		if name == "" {
			name = "unknown server"
		}
		cl := s.clientOf(sv)
		line("Server view", fmt.Sprintf("%s at %s (%d scrapes, %d failed)", name, sv.Target, sv.Scrapes, sv.Failed))
		if sv.RunningRequests != nil {
			line("  running requests", gauge(sv.RunningRequests, 1))
		}
		if sv.WaitingRequests != nil {
			line("  waiting requests", gauge(sv.WaitingRequests, 1))
		}
		if sv.KVCacheUsage != nil {
			line("  KV-cache usage (%)", gauge(sv.KVCacheUsage, 100))
		}
		if sv.PrefixCacheHitRatio != nil {
			v := num(*sv.PrefixCacheHitRatio)
			if cl.TotalISL > 0 && cl.ExpectedCachedTokens > 0 {
				v += " (trace expects " + num(float64(cl.ExpectedCachedTokens)/float64(cl.TotalISL)) + ")"
			}
			line("  prefix-cache hit ratio", v)
		}
		if sv.PromptTokensPerSec != nil {
			line("  prompt tokens/s (server)", num(*sv.PromptTokensPerSec))
		}
		if sv.GenTokensPerSec != nil && !s.noOutput() {
			line("  generation tokens/s (server)", num(*sv.GenTokensPerSec))
		}
		if sv.Requests != nil {
			line("  requests (server / sent)", fmt.Sprintf("%s / %d", fmtCount(*sv.Requests), s.serverCheck(sv).RequestsSent))
		}
		if sv.PromptTokens != nil {
			line("  prompt tokens (server / sent)", fmt.Sprintf("%s / %d", fmtCount(*sv.PromptTokens), s.serverCheck(sv).PromptTokensSent))
		}
		for _, c := range cl.clientVsServer(sv) {
			line("  "+c.tag+" mean (ms)", fmt.Sprintf("client %s; server's own histogram %s (client − server %s)",
				num(c.client), num(c.server), num(c.client-c.server)))
		}
		for _, h := range []struct {
			tag string
			h   *HistogramStats
		}{{"time_to_first_token", sv.TTFT}, {"inter_token_latency", sv.ITL}, {"request_latency", sv.E2E}} {
			if line2 := bucketLine(h.h); line2 != "" {
				line("  "+h.tag+" p50/90/99", line2)
			}
		}
	}
	if g := s.Telemetry.GPU; g != nil {
		line("GPUs ("+g.Source+")", fmt.Sprintf("%d, avg power %s W, energy %s J, %s J/output token",
			g.GPUs, num(g.AvgPowerW), num(g.EnergyJ), fmt.Sprintf("%.4f", g.EnergyPerOutputTokenJ)))
	}
}

// bucketLine is the console line of a server histogram's quantiles: the
// bucket each falls in, with the value interpolated inside it, which is
// not a measured value; "" when the histogram has no quantiles.
func bucketLine(h *HistogramStats) string {
	if h == nil || h.P50Bucket == nil || h.P90Bucket == nil || h.P99Bucket == nil || h.P50MS == nil || h.P90MS == nil || h.P99MS == nil {
		return ""
	}
	return fmt.Sprintf("server histogram buckets %s / %s / %s ms (interpolated %s / %s / %s: only the bucket is measured)",
		h.P50Bucket, h.P90Bucket, h.P99Bucket, num(*h.P50MS), num(*h.P90MS), num(*h.P99MS))
}
