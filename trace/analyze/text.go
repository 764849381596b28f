package analyze

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText writes rep as readable, aligned tables: the human form of
// `reprise analyze-trace`. Every number carries its unit; each section says
// whether it is token-weighted in time order (reprise) or unweighted in file
// order (AIPerf).
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }

	if s := rep.Source; s != nil {
		p("trace\t%s\n", s.Path)
		p("  format\t%s\n", s.Format)
		p("  size\t%s bytes, sha256 %s\n", fmtInt(s.Bytes), s.SHA256)
		drop := ""
		if n := len(s.Dropped); n > 0 {
			parts := make([]string, 0, n)
			for _, k := range sortedKeys(s.Dropped) {
				parts = append(parts, fmt.Sprintf("%s %s", fmtInt(s.Dropped[k]), k))
			}
			drop = " (dropped: " + strings.Join(parts, ", ") + ")"
		}
		p("  rows\t%s read, %s kept%s\n", fmtInt(s.RowsRead), fmtInt(s.RowsKept), drop)
		if s.Sorted {
			p("  order\tnot sorted by time: sorted stably for the time-order sections\n")
		}
		p("\n")
	}

	a := rep.Arrivals
	p("ARRIVALS (time order)\n")
	p("  rows\t%s\n", fmtInt(rep.Rows))
	p("  span\t%s s\n", fmtFloat(rep.SpanSeconds, 3))
	p("  mean rate\t%s req/s\n", fmtFloat(a.MeanRate, 3))
	p("  peak\t%s req in one second; %s req/s in the busiest minute (%s req)\n",
		fmtInt(a.Peak1s), fmtFloat(a.Peak1minRate, 2), fmtInt(a.Peak1min))
	p("  inter-arrival gap\tmean %s s, p50 %s s, p90 %s s, max %s s\n",
		fmtFloat(a.Gaps.Mean, 4), fmtFloat(a.Gaps.P50, 4), fmtFloat(a.Gaps.P90, 4), fmtFloat(a.Gaps.Max, 4))
	p("  gap CV\t%s (1 = Poisson; above 1 = bursty)\n", fmtFloat(a.GapCV, 3))
	p("  zero gaps\t%s of gaps\n", fmtPercent(a.ZeroGapShare))
	p("  distinct timestamps\t%s\n", fmtInt(a.DistinctTimestamps))
	if a.TimedByDelay > 0 {
		p("  timed by delay\t%s rows (placed at previous turn + delay: a lower bound)\n", fmtInt(a.TimedByDelay))
	}
	if s := rep.Session; s != nil {
		p("  sessions\t%s sessions, %s rows; turns per session mean %s, p50 %s, max %s\n",
			fmtInt(s.Sessions), fmtInt(s.RowsInSessions), fmtFloat(s.TurnsPerSession.Mean, 2),
			fmtFloat(s.TurnsPerSession.P50, 1), fmtFloat(s.TurnsPerSession.Max, 0))
	}
	p("\n")

	l := rep.Lengths
	p("LENGTHS (tokens per request)\t\tmean\tp50\tp90\tp99\tmax\ttotal\t\n")
	for _, x := range []struct {
		name  string
		s     Stats
		total int64
	}{{"input (ISL)", rep.ISL, l.InputTokens}, {"output (OSL)", rep.OSL, l.OutputTokens}} {
		p("  %s\t\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.name, fmtFloat(x.s.Mean, 1), fmtFloat(x.s.P50, 1),
			fmtFloat(x.s.P90, 1), fmtFloat(x.s.P99, 1), fmtFloat(x.s.Max, 0), fmtInt(x.total))
	}
	p("  input over 8k / 32k / 128k tokens\t%s / %s / %s rows\n", fmtInt(l.ISLOver8k), fmtInt(l.ISLOver32k), fmtInt(l.ISLOver128k))
	p("  output of at most 3 tokens\t%s rows\n", fmtInt(l.OSLAtMost3))
	p("\n")

	if c := rep.Cache; c != nil {
		writeCache(p, c)
	} else {
		p("PREFIX CACHE\tno hash ids in this trace: no cache statistics\n\n")
	}
	if s := rep.AIPerf; s != nil {
		writeAIPerf(p, s, rep.Cache)
	}
	return tw.Flush()
}

func writeCache(p func(string, ...any), c *Cache) {
	p("PREFIX CACHE (token-weighted, time order)\n")
	p("  block size\t%s tokens; %s rows with ids, %s ids, %s distinct blocks\n",
		fmtInt(int64(c.BlockSize)), fmtInt(c.RowsWithIDs), fmtInt(c.TotalBlocks), fmtInt(c.DistinctBlocks))
	p("  infinite cache\ttoken hit %s, block hit %s, ideal prefill speedup %s\n",
		fmtPercent(c.TokenHitRatio), fmtPercent(c.BlockHitRatio), fmtSpeedup(c.IdealSpeedup))
	if len(c.LRU) > 0 {
		p("\n  LRU capacity\t\ttoken hit\t%% of ceiling\tblock hit\tspeedup\t\n")
		for _, l := range c.LRU {
			p("  %s tokens\t\t%s\t%s\t%s\t%s\t\n", fmtTokens(l.CapacityTokens), fmtPercent(l.TokenHitRatio),
				fmtPercent(l.FractionOfCeiling), fmtPercent(l.BlockHitRatio), fmtSpeedup(l.IdealSpeedup))
		}
		p("\n")
	}
	var sk []string
	for _, s := range c.Skew {
		sk = append(sk, fmt.Sprintf("top %s → %s", fmtPercent(s.Fraction), fmtPercent(s.Share)))
	}
	p("  skew\t%s of reuse hits (%s of %s blocks reused)\n", strings.Join(sk, ", "), fmtInt(c.BlocksReused), fmtInt(c.DistinctBlocks))
	rt := c.ReuseTime
	p("  reuse time\tp50 %s s, p80 %s s, p90 %s s, p99 %s s\n", fmtFloat(rt.P50, 2), fmtFloat(rt.P80, 2), fmtFloat(rt.P90, 2), fmtFloat(rt.P99, 2))
	p("  reuse within\t10 s %s, 60 s %s, 600 s %s of hits\n", fmtPercent(rt.Within10s), fmtPercent(rt.Within60s), fmtPercent(rt.Within600s))
	rd := c.ReuseDistance
	p("  reuse distance\tp50 %s, p80 %s, p90 %s, p99 %s requests\n", fmtFloat(rd.P50, 1), fmtFloat(rd.P80, 1), fmtFloat(rd.P90, 1), fmtFloat(rd.P99, 1))
	p("  prefix tree\t%s roots, depth mean %s / max %s blocks\n", fmtInt(c.PrefixRoots), fmtFloat(c.MeanDepth, 2), fmtInt(c.MaxDepth))
	for _, g := range []struct {
		title string
		gs    []Group
	}{{"by kind", c.ByKind}, {"by turn", c.ByTurn}} {
		if len(g.gs) == 0 {
			continue
		}
		p("\n  %s\t\trows\tinput tokens\ttoken hit\tshare of hits\t\n", g.title)
		for _, x := range g.gs {
			p("  %s\t\t%s\t%s\t%s\t%s\t\n", x.Name, fmtInt(x.Rows), fmtInt(x.InputTokens), fmtPercent(x.TokenHitRatio), fmtPercent(x.HitShare))
		}
	}
	p("\n")
}

func writeAIPerf(p func(string, ...any), s *AIPerfStats, c *Cache) {
	p("AIPERF analyze-trace (unweighted, file order; AIPerf's names)\n")
	p("  total_requests\t%d\n", s.TotalRequests)
	p("  unique_prefixes\t%d\n", s.UniquePrefixes)
	p("  num_prefix_groups\t%d\n", s.NumPrefixGroups)
	hint := "mean of per-request hit fractions"
	if c != nil {
		hint += "; token-weighted: " + fmtFloat(c.TokenHitRatio, 4)
	}
	p("  cache_hit_rate\t%s (%s)\n", fmtFloat(s.CacheHitRate, 4), hint)
	p("  prefix_reuse_ratio\t%s\n", fmtFloat(s.PrefixReuseRatio, 4))
	p("\n  series\t\tmean\tstd_dev\tmin\tp25\tmedian\tp75\tmax\t\n")
	for _, x := range []struct {
		name string
		m    *MetricStats
		dec  int
	}{
		{"isl_stats", s.ISLStats, 2}, {"osl_stats", s.OSLStats, 2},
		{"context_length_stats", s.ContextStats, 2}, {"unique_prompt_length_stats", s.UniquePromptStat, 2},
		{"hit_rate_stats", s.HitRateStats, 4},
	} {
		if x.m == nil {
			p("  %s\t\t-\t-\t-\t-\t-\t-\t-\t\n", x.name)
			continue
		}
		m := x.m
		p("  %s\t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", x.name, fmtFloat(m.Mean, x.dec), fmtFloat(m.StdDev, x.dec),
			fmtFloat(m.Min, x.dec), fmtFloat(m.P25, x.dec), fmtFloat(m.Median, x.dec), fmtFloat(m.P75, x.dec), fmtFloat(m.Max, x.dec))
	}
}

// fmtInt formats n with thousands separators: 1234567 → "1,234,567".
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtFloat formats f with dec decimals and thousands separators.
func fmtFloat(f float64, dec int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', dec, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return s
	}
	out := fmtInt(n)
	if n == 0 && strings.HasPrefix(intPart, "-") {
		out = "-0"
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

// fmtPercent formats a fraction as a percentage with two decimals.
func fmtPercent(f float64) string { return fmtFloat(100*f, 2) + " %" }

// fmtSpeedup formats an ideal speedup, "∞" when nil.
func fmtSpeedup(s *float64) string {
	if s == nil {
		return "∞"
	}
	return fmtFloat(*s, 3) + "×"
}

// fmtTokens formats a token count compactly: 3000000 → "3M", 500000 →
// "500K", 1500000 → "1.5M".
func fmtTokens(n int64) string {
	for _, u := range []struct {
		v int64
		s string
	}{{1_000_000_000, "G"}, {1_000_000, "M"}, {1_000, "K"}} {
		if n >= u.v {
			return strconv.FormatFloat(float64(n)/float64(u.v), 'f', -1, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
