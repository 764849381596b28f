package analyze

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reprise-bench/reprise/internal/numfmt"
)

// WriteText writes rep as readable, aligned tables: the human form of
// `reprise analyze-trace`. Every number carries its unit; each section says
// whether it is token-weighted in time order (reprise) or unweighted in file
// order (AIPerf).
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	if s := rep.Source; s != nil {
		drop := ""
		if n := len(s.Dropped); n > 0 {
			parts := make([]string, 0, n)
			for _, k := range sortedKeys(s.Dropped) {
				parts = append(parts, fmt.Sprintf("%s %s", numfmt.Group(s.Dropped[k]), k))
			}
			drop = " (dropped: " + strings.Join(parts, ", ") + ")"
		}
		kv := [][2]string{
			{"path", s.Path},
			{"format", s.Format},
			{"size", numfmt.Group(s.Bytes) + " bytes, sha256 " + s.SHA256},
			{"rows", numfmt.Group(s.RowsRead) + " read, " + numfmt.Group(s.RowsKept) + " kept" + drop},
		}
		if s.Sorted {
			kv = append(kv, [2]string{"order", "not sorted by time: sorted stably for the time-order sections"})
		}
		b.WriteString("TRACE\n")
		writeKV(&b, "  ", kv)
		b.WriteString("\n")
	}

	a := rep.Arrivals
	b.WriteString("ARRIVALS (time order)\n")
	kv := [][2]string{
		{"rows", numfmt.Group(rep.Rows)},
		{"span", fmtFloat(rep.SpanSeconds, 3) + " s"},
		{"mean rate", fmtFloat(a.MeanRate, 3) + " req/s"},
		{"peak second", numfmt.Group(a.Peak1s) + " req"},
		{"peak minute", fmtFloat(a.Peak1minRate, 2) + " req/s (" + numfmt.Group(a.Peak1min) + " req)"},
		{"inter-arrival gap", fmt.Sprintf("mean %s s, p50 %s s, p90 %s s, max %s s",
			fmtFloat(a.Gaps.Mean, 4), fmtFloat(a.Gaps.P50, 4), fmtFloat(a.Gaps.P90, 4), fmtFloat(a.Gaps.Max, 4))},
		{"gap CV", fmtFloat(a.GapCV, 3) + " (std/mean; 1 = Poisson, above 1 = bursty)"},
		{"zero gaps", fmtPercent(a.ZeroGapShare) + " of gaps"},
		{"distinct timestamps", numfmt.Group(a.DistinctTimestamps)},
	}
	if a.TimedByDelay > 0 {
		kv = append(kv, [2]string{"timed by delay", numfmt.Group(a.TimedByDelay) + " rows (previous turn + delay: a lower bound)"})
	}
	if s := rep.Session; s != nil {
		kv = append(kv, [2]string{"sessions", fmt.Sprintf("%s sessions, %s rows; turns per session mean %s, p50 %s, max %s",
			numfmt.Group(s.Sessions), numfmt.Group(s.RowsInSessions), fmtFloat(s.TurnsPerSession.Mean, 2),
			fmtFloat(s.TurnsPerSession.P50, 1), fmtFloat(s.TurnsPerSession.Max, 0))})
	}
	writeKV(&b, "  ", kv)
	b.WriteString("\n")

	l := rep.Lengths
	b.WriteString("LENGTHS (tokens per request)\n")
	lt := [][]string{{"", "mean", "p50", "p90", "p99", "max", "total"}}
	for _, x := range []struct {
		name  string
		s     Stats
		total int64
	}{{"input (ISL)", rep.ISL, l.InputTokens}, {"output (OSL)", rep.OSL, l.OutputTokens}} {
		lt = append(lt, []string{x.name, fmtFloat(x.s.Mean, 1), fmtFloat(x.s.P50, 1),
			fmtFloat(x.s.P90, 1), fmtFloat(x.s.P99, 1), fmtFloat(x.s.Max, 0), numfmt.Group(x.total)})
	}
	writeTable(&b, "  ", lt)
	kv = [][2]string{
		{"input over 8k / 32k / 128k", fmt.Sprintf("%s / %s / %s rows", numfmt.Group(l.ISLOver8k), numfmt.Group(l.ISLOver32k), numfmt.Group(l.ISLOver128k))},
		{"output of at most 3 tokens", numfmt.Group(l.OSLAtMost3) + " rows"},
	}
	if l.OSLUnknown > 0 {
		kv = append(kv, [2]string{"output length unknown", numfmt.Group(l.OSLUnknown) + " rows (not in the output statistics)"})
	}
	writeKV(&b, "  ", kv)
	b.WriteString("\n")

	if c := rep.Cache; c != nil {
		writeCache(&b, c)
	} else {
		b.WriteString("PREFIX CACHE\n  no hash ids in this trace: no cache statistics\n\n")
	}
	if d := rep.Dependencies; d != nil {
		writeDeps(&b, d)
	}
	if m := rep.Media; m != nil {
		writeMedia(&b, m)
	}
	if s := rep.AIPerf; s != nil {
		writeAIPerf(&b, s, rep.Cache)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeKV writes key-value lines with the keys padded to one width.
// writeDeps prints the dependency section (design 0008).
func writeDeps(b *strings.Builder, d *Dependencies) {
	b.WriteString("DEPENDENT REQUESTS (wait_for)\n")
	writeKV(b, "  ", [][2]string{
		{"tasks", fmt.Sprintf("%s tasks, %s dependent rows", numfmt.Group(d.Tasks), numfmt.Group(d.DependentRows))},
		{"ancestor prefix hits", fmt.Sprintf("%s of input tokens (%s tokens): reused from the rows each row waits for", fmtPercent(d.AncestorTokenHitRatio), fmtTokens(d.AncestorHitTokens))},
	})
	t := [][]string{{"", "mean", "p50", "p90", "p99", "max"}}
	for _, x := range []struct {
		name string
		s    Stats
		dec  int
	}{
		{"depth (levels per task)", d.Depth, 1}, {"requests per task", d.TaskSize, 1}, {"fan-out", d.FanOut, 1}, {"fan-in", d.FanIn, 1},
		{"critical path wait (s)", d.CriticalPathWait, 3}, {"think time (s)", d.ThinkTime, 3}, {"tool time (s)", d.ToolTime, 3},
	} {
		t = append(t, []string{x.name, fmtFloat(x.s.Mean, x.dec), fmtFloat(x.s.P50, x.dec), fmtFloat(x.s.P90, x.dec),
			fmtFloat(x.s.P99, x.dec), fmtFloat(x.s.Max, x.dec)})
	}
	writeTable(b, "  ", t)
	b.WriteString("\n")
}

func writeKV(b *strings.Builder, indent string, kv [][2]string) {
	width := 0
	for _, p := range kv {
		width = max(width, utf8.RuneCountInString(p[0]))
	}
	for _, p := range kv {
		fmt.Fprintf(b, "%s%s%s  %s\n", indent, p[0], strings.Repeat(" ", width-utf8.RuneCountInString(p[0])), p[1])
	}
}

// writeTable writes rows as columns: the first left-aligned, the others
// right-aligned (numbers), two spaces apart. rows[0] is the header.
func writeTable(b *strings.Builder, indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				line.WriteString(c + pad)
			} else {
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

func writeCache(b *strings.Builder, c *Cache) {
	b.WriteString("PREFIX CACHE (token-weighted, time order)\n")
	rt, rd := c.ReuseTime, c.ReuseDistance
	writeKV(b, "  ", [][2]string{
		{"block size", numfmt.Group(int64(c.BlockSize)) + " tokens"},
		{"ids", fmt.Sprintf("%s rows with ids, %s ids, %s distinct blocks, %s reused",
			numfmt.Group(c.RowsWithIDs), numfmt.Group(c.TotalBlocks), numfmt.Group(c.DistinctBlocks), numfmt.Group(c.BlocksReused))},
		{"infinite cache", fmt.Sprintf("token hit %s, block hit %s, ideal prefill speedup %s",
			fmtPercent(c.TokenHitRatio), fmtPercent(c.BlockHitRatio), fmtSpeedup(c.IdealSpeedup))},
		{"reuse time", fmt.Sprintf("p50 %s s, p80 %s s, p90 %s s, p99 %s s",
			fmtFloat(rt.P50, 2), fmtFloat(rt.P80, 2), fmtFloat(rt.P90, 2), fmtFloat(rt.P99, 2))},
		{"reuse within", fmt.Sprintf("10 s: %s, 60 s: %s, 600 s: %s of hits",
			fmtPercent(rt.Within10s), fmtPercent(rt.Within60s), fmtPercent(rt.Within600s))},
		{"reuse distance", fmt.Sprintf("p50 %s, p80 %s, p90 %s, p99 %s requests",
			fmtFloat(rd.P50, 1), fmtFloat(rd.P80, 1), fmtFloat(rd.P90, 1), fmtFloat(rd.P99, 1))},
		{"prefix tree", fmt.Sprintf("%s roots (distinct first ids), depth mean %s / max %s blocks",
			numfmt.Group(c.PrefixRoots), fmtFloat(c.MeanDepth, 2), numfmt.Group(c.MaxDepth))},
	})
	if len(c.LRU) > 0 {
		b.WriteString("\n")
		t := [][]string{{"LRU capacity", "token hit", "of ceiling", "block hit", "ideal speedup"}}
		for _, l := range c.LRU {
			t = append(t, []string{fmtTokens(l.CapacityTokens) + " tokens", fmtPercent(l.TokenHitRatio),
				fmtPercent(l.FractionOfCeiling), fmtPercent(l.BlockHitRatio), fmtSpeedup(l.IdealSpeedup)})
		}
		writeTable(b, "  ", t)
	}
	if len(c.Skew) > 0 {
		b.WriteString("\n")
		t := [][]string{{"most reused blocks", "blocks", "share of reuse hits"}}
		for _, s := range c.Skew {
			t = append(t, []string{"top " + strconv.FormatFloat(100*s.Fraction, 'f', -1, 64) + " %", numfmt.Group(s.Blocks), fmtPercent(s.Share)})
		}
		writeTable(b, "  ", t)
	}
	for _, g := range []struct {
		title string
		gs    []Group
	}{{"by kind", c.ByKind}, {"by turn (1 = first)", c.ByTurn}} {
		if len(g.gs) == 0 {
			continue
		}
		b.WriteString("\n")
		t := [][]string{{g.title, "rows", "input tokens", "token hit", "share of hits"}}
		for _, x := range g.gs {
			t = append(t, []string{x.Name, numfmt.Group(x.Rows), numfmt.Group(x.InputTokens), fmtPercent(x.TokenHitRatio), fmtPercent(x.HitShare)})
		}
		writeTable(b, "  ", t)
	}
	b.WriteString("\n")
}

func writeAIPerf(b *strings.Builder, s *AIPerfStats, c *Cache) {
	b.WriteString("AIPERF analyze-trace (unweighted, file order; AIPerf's names and definitions)\n")
	hint := "mean of per-request hit fractions"
	if c != nil {
		hint += "; token-weighted above: " + fmtFloat(c.TokenHitRatio, 4)
	}
	writeKV(b, "  ", [][2]string{
		{"total_requests", strconv.FormatInt(s.TotalRequests, 10)},
		{"unique_prefixes", strconv.FormatInt(s.UniquePrefixes, 10)},
		{"num_prefix_groups", strconv.FormatInt(s.NumPrefixGroups, 10)},
		{"cache_hit_rate", fmtFloat(s.CacheHitRate, 4) + " (" + hint + ")"},
		{"prefix_reuse_ratio", fmtFloat(s.PrefixReuseRatio, 4)},
	})
	b.WriteString("\n")
	t := [][]string{{"series", "mean", "std_dev", "min", "p25", "median", "p75", "max"}}
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
			t = append(t, []string{x.name, "-", "-", "-", "-", "-", "-", "-"})
			continue
		}
		m := x.m
		t = append(t, []string{x.name, fmtFloat(m.Mean, x.dec), fmtFloat(m.StdDev, x.dec), fmtFloat(m.Min, x.dec),
			fmtFloat(m.P25, x.dec), fmtFloat(m.Median, x.dec), fmtFloat(m.P75, x.dec), fmtFloat(m.Max, x.dec)})
	}
	writeTable(b, "  ", t)
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
	out := numfmt.Group(n)
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

// writeMedia prints the media section.
func writeMedia(b *strings.Builder, m *Media) {
	b.WriteString("MEDIA\n")
	kv := [][2]string{
		{"rows with media", fmt.Sprint(m.RowsWithMedia)},
		{"images", fmt.Sprintf("%d (%.2f per row with images, max %.0f; %d bytes, %d pixels)", m.Images, m.ImagesPerRow.Mean, m.ImagesPerRow.Max, m.ImageBytes, m.ImagePixels)},
	}
	if st := m.ImagePixelsPerImage; st.Count > 0 {
		kv = append(kv, [2]string{"pixels per image", fmt.Sprintf("mean %.0f, p50 %.0f, p90 %.0f, max %.0f (%d images of known size)", st.Mean, st.P50, st.P90, st.Max, st.Count)})
	}
	if st := m.ImageBytesPerRow; st.Count > 0 {
		kv = append(kv, [2]string{"image bytes per row", fmt.Sprintf("mean %.0f, p50 %.0f, p90 %.0f, max %.0f", st.Mean, st.P50, st.P90, st.Max)})
	}
	if len(m.ImageSizes) > 0 {
		var parts []string
		for _, s := range m.ImageSizes {
			parts = append(parts, fmt.Sprintf("%s ×%d", s.Size, s.Images))
		}
		kv = append(kv, [2]string{"image sizes", strings.Join(parts, ", ")})
	}
	kv = append(kv, [2]string{"audio clips", fmt.Sprintf("%d (%.2f s, %d bytes)", m.Audios, m.AudioSeconds, m.AudioBytes)})
	if st := m.AudioSecondsPerRow; st.Count > 0 {
		kv = append(kv, [2]string{"audio s per row", fmt.Sprintf("mean %.3f, p50 %.3f, p90 %.3f, max %.3f (%.2f clips per row with audio)", st.Mean, st.P50, st.P90, st.Max, m.AudiosPerRow.Mean)})
	}
	kv = append(kv, [2]string{"videos", fmt.Sprintf("%d (%.2f s, %d frames, %d bytes)", m.Videos, m.VideoSeconds, m.VideoFrames, m.VideoBytes)})
	if st := m.VideosPerRow; st.Count > 0 {
		kv = append(kv, [2]string{"videos per row", fmt.Sprintf("mean %.2f, max %.0f", st.Mean, st.Max)})
	}
	if st := m.VideoSecondsPerRow; st.Count > 0 {
		f := m.VideoFramesPerRow
		kv = append(kv, [2]string{"video s per row", fmt.Sprintf("mean %.3f, p50 %.3f, p90 %.3f, max %.3f", st.Mean, st.P50, st.P90, st.Max)})
		kv = append(kv, [2]string{"video frames per row", fmt.Sprintf("mean %.1f, p50 %.0f, p90 %.0f, max %.0f", f.Mean, f.P50, f.P90, f.Max)})
	}
	writeKV(b, "  ", kv)
	b.WriteString("\n")
}
