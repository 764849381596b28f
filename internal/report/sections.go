package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
)

// --- verdicts and summary ---

func verdictSection(runs []*runData) Section {
	t := Table{Header: []string{"check"}}
	var rows [][]Cell
	for ri, d := range runs {
		t.Header = append(t.Header, d.label)
		cs := d.checks()
		code := exitCode(cs)
		codeCell := Cell{Text: strconv.Itoa(code) + " " + exitMeaning(code), Class: "good"}
		if code != 0 {
			codeCell.Class = "bad"
		}
		if ri == 0 {
			rows = append(rows, []Cell{{Text: "exit code"}})
			for _, c := range cs {
				name := c.name
				if strings.HasPrefix(name, "goodput") {
					name = "goodput"
				}
				rows = append(rows, []Cell{{Text: name}})
			}
		}
		rows[0] = append(rows[0], codeCell)
		for i, c := range cs {
			cell := Cell{Text: c.value + " · limit: " + c.limit, Class: "good"}
			if c.limit == "—" {
				cell.Text = c.value
			}
			if strings.HasPrefix(c.name, "goodput (") {
				cell.Text = strings.TrimPrefix(c.name, "goodput ") + ": " + cell.Text
			}
			switch {
			case c.failed:
				cell.Class = "bad"
			case c.warn:
				cell.Class = "warn"
			case c.unknown:
				cell.Class = ""
			}
			if i+1 < len(rows) {
				rows[i+1] = append(rows[i+1], cell)
			}
		}
	}
	t.Rows = rows
	return Section{ID: "verdicts", Title: "Verdicts",
		Explain: "The checks reprise replay judged each run by, in its order; the exit code is the first failure's (docs/format/cli.md).",
		Tables:  []Table{t}}
}

// exitMeaning names an exit code of the one table (internal/exitcode).
func exitMeaning(code int) string {
	switch code {
	case 0:
		return "(passed)"
	case 1:
		return "(interrupted, or no request succeeded)"
	case 3:
		return "(goodput SLO or error rate failed)"
	case 4:
		return "(schedule lateness over budget)"
	}
	return ""
}

// headline are the metrics the summary table shows, with short names.
var headline = []struct{ tag, name string }{
	{"time_to_first_token", "TTFT"},
	{"time_to_first_output_token", "TTFO"},
	{"inter_token_latency", "ITL"},
	{"request_latency", "E2E"},
	{"latency_from_intended", "E2E from intended send"},
	{"input_sequence_length", "ISL (tokens)"},
	{"output_sequence_length", "OSL (tokens)"},
	{"schedule_lateness", "schedule lateness"},
	{"client_read_lag", "client read lag"},
}

func summarySection(runs []*runData) Section {
	tot := Table{Caption: "Throughput and counts", Header: []string{"run", "ok", "failed", "warmup", "duration",
		"requests/s", "output tokens/s", "total tokens/s", "intended rate", "achieved rate", "goodput req/s"}}
	for _, d := range runs {
		s := d.sum
		tot.Rows = append(tot.Rows, []Cell{{Text: d.label}, num(float64(s.RequestCount)), num(float64(s.ErrorRequestCount)),
			num(float64(s.WarmupCount)), {Text: s.BenchmarkDuration.Round(1e6).String(), Class: "num"},
			num(s.RequestThroughput), num(s.OutputTokenThroughput), num(s.TotalTokenThroughput),
			num(s.IntendedRate), num(s.AchievedRate), goodputCell(s)})
	}
	lat := Table{Caption: "Per-request metrics (ms unless marked)", Header: []string{"metric", "run", "avg", "p50", "p90", "p95", "p99", "max", "count"}}
	// A run that applied a reprise selftest calibration shows its error
	// bars: the calibrated p99 timing error beside TTFT, ITL and E2E.
	calibrated := false
	for _, d := range runs {
		calibrated = calibrated || d.sum.Options.Calibration != nil
	}
	if calibrated {
		lat.Header = append(lat.Header, "± calibrated error p99")
	}
	for _, h := range headline {
		for _, d := range runs {
			st, ok := d.sum.Metrics[h.tag]
			if !ok {
				continue
			}
			row := []Cell{{Text: h.name}, {Text: d.label}, num(st.Avg), num(st.P50), num(st.P90),
				num(st.P95), num(st.P99), num(st.Max), num(float64(st.Count))}
			if calibrated {
				e := Cell{Text: "", Class: "num"}
				if c := d.sum.Options.Calibration; c != nil {
					if eb, ok := c.Errors[h.tag]; ok {
						e.Text = "±" + num(eb.P99).Text
						if d.sum.Quality().Verdict != summary.QualityGood {
							// Its errors are its own then, not the
							// calibration's (the verdicts say why).
							e.Text = "does not hold: degraded run"
						}
					}
				}
				row = append(row, e)
			}
			lat.Rows = append(lat.Rows, row)
		}
	}
	return Section{ID: "summary", Title: "Summary",
		Explain: "The run's summary, computed from its records as reprise summarize does (docs/format/summary.md).",
		Tables:  []Table{tot, lat}}
}

// goodputCell is the run's goodput, or a dash saying that no SLO was set:
// without --goodput there is no goodput, not a goodput of 0.
func goodputCell(s *summary.Summary) Cell {
	if len(s.Options.Goodput) == 0 {
		return Cell{Text: "— (no --goodput SLO)", Class: "num"}
	}
	return num(s.Goodput)
}

// --- latency ---

// cdfGrids returns, per latencyMetrics entry, the latencies its CDF is
// evaluated at, shared by every run: from just below the least value (the
// CDF's 0) to the largest (its 100 %); nil when no run has a value.
func cdfGrids(runs []*runData) [][]float64 {
	grids := make([][]float64, len(latencyMetrics))
	for i := range latencyMetrics {
		lo, hi := math.Inf(1), 0.0
		for _, d := range runs {
			if d.latHi[i] > 0 {
				lo, hi = min(lo, d.latLo[i]), max(hi, d.latHi[i])
			}
		}
		if hi == 0 {
			continue
		}
		if lo == hi {
			hi *= 1.05
		}
		grids[i] = logGrid(lo/1.05, hi, CDFPoints)
	}
	return grids
}

// percentileNames label the bars, from summary.Stats.
var percentileNames = []string{"p50", "p75", "p90", "p95", "p99", "max"}

func percentiles(st *summary.Stats) []float64 {
	return []float64{st.P50, st.P75, st.P90, st.P95, st.P99, st.Max}
}

func latencySection(runs []*runData, grids [][]float64, maxPoints int) Section {
	sec := Section{ID: "latency", Title: "Latency",
		Explain: "Distributions of the measured (non-warmup) successful requests, from the records."}
	for i, m := range latencyMetrics {
		grid := grids[i]
		if grid == nil {
			continue
		}
		cdf := Chart{ID: "cdf-" + slug(m.name), Title: m.name + " CDF", Kind: Steps,
			Explain: fmt.Sprintf("Share of requests whose %s is at most x (log scale), evaluated exactly at %d latencies.", m.long, CDFPoints),
			XAxis:   Axis{Label: m.name + " (ms)", Log: true}, YAxis: Axis{Label: "% of requests"}, X: grid}
		bars := Chart{ID: "pct-" + slug(m.name), Title: m.name + " percentiles", Kind: Bars,
			Explain: "The " + m.long + " percentiles of the summary (ms).",
			XAxis:   Axis{Label: "percentile", Categories: percentileNames}, YAxis: Axis{Label: m.name + " (ms)"}}
		for _, d := range runs {
			if d.sc.cdfN[i] == 0 {
				continue
			}
			cdf.Series = append(cdf.Series, Series{Label: d.label, Color: d.color, Y: d.sc.cdf[i]})
			if st, ok := d.sum.Metrics[m.tag]; ok {
				bars.Series = append(bars.Series, Series{Label: d.label, Color: d.color, Y: percentiles(st)})
			}
		}
		sec.Charts = append(sec.Charts, cdf)
		if len(bars.Series) > 0 {
			sec.Charts = append(sec.Charts, bars)
		}
	}
	// TTFT against intended send time, one series per run and outcome.
	sc := Chart{ID: "ttft-vs-time", Title: "TTFT against intended send time", Kind: Scatter, TimeAxis: true,
		Explain: fmt.Sprintf("Each dot is a request (warmup included, shaded): TTFT, or time to failure for a failed request without a token, coloured by error kind; at most %d ok and %d failed requests per run, evenly strided.", maxPoints, maxPoints),
		XAxis:   Axis{Label: "intended send time (s)"}, YAxis: Axis{Label: "TTFT (ms)", Log: true}}
	isl := Chart{ID: "isl-vs-ttft", Title: "ISL against TTFT (prefill cost)", Kind: Scatter,
		Explain: "Input tokens against time to first token of successful requests: the slope is the prefill cost per token.",
		XAxis:   Axis{Label: "input tokens"}, YAxis: Axis{Label: "TTFT (ms)"}}
	osl := Chart{ID: "osl-vs-e2e", Title: "OSL against E2E", Kind: Scatter,
		Explain: "Output tokens against request latency of successful requests: the slope is the decode time per token.",
		XAxis:   Axis{Label: "output tokens"}, YAxis: Axis{Label: "E2E (ms)"}}
	for _, d := range runs {
		if len(d.sc.ttftX) > 0 {
			sc.Series = append(sc.Series, Series{Label: d.label + " ok", Color: d.color, X: d.sc.ttftX, Y: d.sc.ttftY})
		}
		if len(d.sc.islX) > 0 {
			isl.Series = append(isl.Series, Series{Label: d.label, Color: d.color, X: d.sc.islX, Y: d.sc.islY})
		}
		if len(d.sc.oslX) > 0 {
			osl.Series = append(osl.Series, Series{Label: d.label, Color: d.color, X: d.sc.oslX, Y: d.sc.oslY})
		}
		for _, k := range slices.Sorted(maps.Keys(d.sc.errX)) {
			name := d.kindName(k)
			sc.Series = append(sc.Series, Series{Label: d.label + " " + name, Color: kindColor(name), X: d.sc.errX[k], Y: d.sc.errY[k]})
		}
		if w, ok := d.warmup(); ok {
			sc.Shade = append(sc.Shade, w)
		}
	}
	for _, c := range []Chart{sc, isl, osl} {
		if len(c.Series) > 0 {
			sec.Charts = append(sec.Charts, c)
		}
	}
	return sec
}

// kindName is the error kind of index k.
func (d *runData) kindName(k uint8) string {
	if int(k) < len(d.kinds) {
		if k == 0 {
			return "ok"
		}
		return string(d.kinds[k])
	}
	return "unknown"
}

// kindColors give each error kind of the contract a colour of its own.
var kindColors = map[record.ErrorKind]string{
	record.ErrHTTPStatus: "#ff7f0e", record.ErrConnect: "#8c564b", record.ErrReset: "#e377c2",
	record.ErrTimeout: "#d62728", record.ErrStreamError: "#bcbd22", record.ErrMalformed: "#17becf",
	record.ErrNoContent: "#7f7f7f", record.ErrAdapter: "#9467bd", record.ErrCancelled: "#aec7e8",
	record.ErrBuild: "#98df8a", record.ErrNotDelivered: "#c49c94", record.ErrTooLarge: "#f7b6d2",
}

func kindColor(kind string) string {
	if c, ok := kindColors[record.ErrorKind(kind)]; ok {
		return c
	}
	return "#000000"
}

// --- time series ---

func loadSection(runs []*runData, tl timeline) Section {
	sec := Section{ID: "load", Title: "Load over time",
		Explain: "What the schedule asked for and what the client and server did, per time bucket; warmup shaded."}
	rate := tl.chart("rate", "Request rate", "Requests per second by intended send time (dashed), by actual send time (solid), and completed successfully (lighter, by response end), per {bucket} bucket.", "requests/s")
	inflight := tl.chart("in-flight", "Requests in flight", "Requests sent and not yet ended, at the end of each {bucket} bucket.", "requests")
	tokens := tl.chart("output-tokens", "Output tokens per second", "Output tokens (reasoning included) per second, each request's spread evenly from its first to its last token, per {bucket} bucket.", "tokens/s")
	for _, d := range runs {
		sent := d.sc.sent
		rate.Series = append(rate.Series,
			Series{Label: d.label + " intended", Color: d.color, Y: tl.perSecond(d.sc.intended), Dash: true},
			Series{Label: d.label + " sent", Color: d.color, Y: tl.perSecond(sent)},
			Series{Label: d.label + " completed", Color: shade(d.color), Y: tl.perSecond(d.sc.done)})
		// In flight at the end of bucket k: sent before its end minus
		// ended before its end.
		ended := d.sc.ended
		fl := make(Values, tl.b.n)
		acc := 0.0
		for k := range fl {
			acc += sent[k] - ended[k]
			fl[k] = acc
		}
		inflight.Series = append(inflight.Series, Series{Label: d.label, Color: d.color, Y: fl})
		tokens.Series = append(tokens.Series, Series{Label: d.label, Color: d.color, Y: tl.perSecond(d.sc.toks)})
	}
	sec.Charts = []Chart{rate, inflight, tokens}
	return sec
}

// overTimeSection draws TTFT and ITL as p50, p90 and p99 per time
// bucket of send time (the p50–p99 band filled) and the error rate per
// bucket of end time.
func overTimeSection(runs []*runData, tl timeline) Section {
	sec := Section{ID: "over-time", Title: "Latency and errors over time",
		Explain: "How the latencies and the failures moved during the run, per time bucket; warmup shaded."}
	for mi, m := range []struct{ id, name, long string }{{"ttft", "TTFT", "time to first token"}, {"itl", "ITL", "inter-token latency"}} {
		c := tl.chart(m.id+"-over-time", m.name+" over time: p50, p90, p99",
			"The "+m.long+" of the successful requests sent in each {bucket} bucket: p50 (solid), p90 (dashed) and p99 (light), the p50–p99 band filled; the summary's percentiles (engine/summary), per bucket.",
			m.name+" (ms)")
		c.YAxis.Log = true
		for _, d := range runs {
			p50, p90, p99 := make(Values, tl.b.n), make(Values, tl.b.n), make(Values, tl.b.n)
			n := 0
			for k, v := range d.sc.byTime[mi] {
				p50[k], p90[k], p99[k] = math.NaN(), math.NaN(), math.NaN()
				if v == nil {
					continue
				}
				st := v.Stats()
				p50[k], p90[k], p99[k] = st.P50, st.P90, st.P99
				n++
			}
			if n == 0 {
				continue
			}
			base := len(c.Series)
			c.Series = append(c.Series, Series{Label: d.label + " p50", Color: d.color, Y: p50},
				Series{Label: d.label + " p90", Color: d.color, Y: p90, Dash: true},
				Series{Label: d.label + " p99", Color: shade(d.color), Y: p99})
			c.Bands = append(c.Bands, Band{Upper: base + 2, Lower: base})
		}
		if len(c.Series) > 0 {
			sec.Charts = append(sec.Charts, c)
		}
	}
	er := tl.chart("error-rate", "Error rate over time",
		"Failed requests as a share of the requests that ended in each {bucket} bucket (never-sent ones at their intended time); no point where none ended.", "% failed")
	for _, d := range runs {
		y := make(Values, tl.b.n)
		for k := range y {
			y[k] = math.NaN()
			if d.sc.outcomes[k] > 0 {
				y[k] = 100 * d.sc.failed[k] / d.sc.outcomes[k]
			}
		}
		er.Series = append(er.Series, Series{Label: d.label, Color: d.color, Y: y})
	}
	if len(er.Series) > 0 {
		sec.Charts = append(sec.Charts, er)
	}
	sec.Charts = append(sec.Charts, sliceCharts(runs, tl)...)
	return sec
}

// sliceCharts draws the runs' time slices (summary.json's time_slices,
// profile --slice-duration): TTFT and request throughput per slice, as the
// summary computed them, at each slice's middle; none when no run has
// slices.
func sliceCharts(runs []*runData, tl timeline) []Chart {
	ttft := tl.chart("slices-ttft", "TTFT per time slice: p50 and p99",
		"The time to first token of each --slice-duration slice's requests (by send time), as summary.json's time_slices give it: p50 (solid), p99 (dashed).", "TTFT (ms)")
	ttft.Kind, ttft.X = Lines, nil
	rate := tl.chart("slices-throughput", "Request throughput per time slice",
		"Requests completed per second among each --slice-duration slice's requests, from summary.json's time_slices.", "requests/s")
	rate.Kind, rate.X = Lines, nil
	for _, d := range runs {
		list, _ := d.summaryJSON["time_slices"].([]any)
		var x, p50, p99, thr Values
		for _, it := range list {
			sl, _ := it.(map[string]any)
			m, _ := sl["metrics"].(map[string]any)
			lo, ok1 := sl["start_ns"].(float64)
			hi, ok2 := sl["end_ns"].(float64)
			if m == nil || !ok1 || !ok2 {
				continue
			}
			x = append(x, ((lo+hi)/2-float64(d.t0))/1e9)
			p50 = append(p50, statOf(m, "time_to_first_token", "p50"))
			p99 = append(p99, statOf(m, "time_to_first_token", "p99"))
			thr = append(thr, statOf(m, "request_throughput", "avg"))
		}
		if len(x) == 0 {
			continue
		}
		ttft.Series = append(ttft.Series, Series{Label: d.label + " p50", Color: d.color, X: x, Y: p50},
			Series{Label: d.label + " p99", Color: d.color, X: x, Y: p99, Dash: true})
		rate.Series = append(rate.Series, Series{Label: d.label, Color: d.color, X: x, Y: thr})
	}
	if len(rate.Series) == 0 {
		return nil
	}
	return []Chart{ttft, rate}
}

// statOf is summary.json's metric tag's statistic, NaN when absent.
func statOf(m map[string]any, tag, stat string) float64 {
	o, _ := m[tag].(map[string]any)
	if v, ok := o[stat].(float64); ok {
		return v
	}
	return math.NaN()
}

// shade is a lighter tone of a #rrggbb colour, for a run's second line.
func shade(c string) string {
	if len(c) != 7 || c[0] != '#' {
		return c
	}
	v, err := strconv.ParseUint(c[1:], 16, 32)
	if err != nil {
		return c
	}
	r, g, b := v>>16&255, v>>8&255, v&255
	light := func(x uint64) uint64 { return x + (255-x)/2 }
	return fmt.Sprintf("#%02x%02x%02x", light(r), light(g), light(b))
}

func truthSection(runs []*runData, tl timeline, maxPoints int) Section {
	sec := Section{ID: "truth", Title: "Truth: did the client keep time, and did the server do what the trace implies?",
		Explain: "Schedule lateness and read lag say whether the measurement can be trusted; cached tokens say whether the server reused what the trace shares."}
	late := tl.chart("lateness", "Schedule lateness", "How late each request was handed to a sender after its intended time: max (solid) and mean (dashed) per {bucket} bucket.", "lateness (ms)")
	lag := tl.chart("read-lag", "Client read lag", "The longest any read of a response waited between the kernel receiving its bytes and reprise reading them, max per {bucket} bucket by response end.", "read lag (ms)")
	anyLag := false
	for _, d := range runs {
		anyLag = anyLag || d.sc.anyLag
		late.Series = append(late.Series, Series{Label: d.label + " max", Color: d.color, Y: d.sc.lateMax},
			Series{Label: d.label + " mean", Color: d.color, Y: d.sc.lateMean, Dash: true})
		lag.Series = append(lag.Series, Series{Label: d.label, Color: d.color, Y: d.sc.lag})
	}
	sec.Charts = append(sec.Charts, late)
	if anyLag {
		sec.Charts = append(sec.Charts, lag)
	}
	cache := Chart{ID: "cache-error", Title: "Server minus expected cached tokens", Kind: Scatter, TimeAxis: true, Shade: tl.shade,
		Explain: "Per request, the prompt tokens the server reported as cached minus what the trace's shared prefixes predict: below zero the server recomputed what it could have reused.",
		XAxis:   Axis{Label: "intended send time (s)"}, YAxis: Axis{Label: "tokens"}}
	fid := Table{Caption: "Cache fidelity and client against server latency", Header: []string{"run", "server cached tokens", "expected cached tokens", "fidelity (server / expected)"}}
	for _, d := range runs {
		if len(d.sc.cacheX) > 0 {
			cache.Series = append(cache.Series, Series{Label: d.label, Color: d.color, X: d.sc.cacheX, Y: d.sc.cacheY})
		}
		if d.sum.ExpectedCachedTokens > 0 || d.sum.ServerCachedTokens > 0 {
			fid.Rows = append(fid.Rows, []Cell{{Text: d.label}, num(float64(d.sum.ServerCachedTokens)),
				num(float64(d.sum.ExpectedCachedTokens)), num(d.sum.CacheFidelity)})
		}
	}
	if len(cache.Series) > 0 {
		sec.Charts = append(sec.Charts, cache)
	}
	if len(fid.Rows) > 0 {
		sec.Tables = append(sec.Tables, fid)
	}
	// The client's values are binned when they became known: TTFT at
	// the first token, ITL at the last ([runData.scan]).
	for mi, m := range []struct{ role, name string }{{"ttft", "TTFT"}, {"itl", "ITL"}} {
		c := tl.chart("client-server-"+m.role, m.name+": client against server",
			"The client's mean "+m.name+" of the requests whose value became known in each {bucket} bucket (solid), against the server's own histogram's mean between consecutive scrapes (dashed).",
			m.name+" (ms)")
		c.Kind, c.X = Lines, nil
		for _, d := range runs {
			server := serverMeans(d, m.role)
			if len(server) == 0 {
				continue
			}
			sums, counts := d.sc.client[mi][0], d.sc.client[mi][1]
			client := Series{Label: d.label + " client", Color: d.color}
			for k := range sums {
				if counts[k] > 0 {
					client.X = append(client.X, float64(k)*tl.b.width)
					client.Y = append(client.Y, sums[k]/counts[k])
				}
			}
			if len(client.X) == 0 {
				continue
			}
			c.Series = append(c.Series, client)
			c.Series = append(c.Series, server...)
		}
		if len(c.Series) > 0 {
			sec.Charts = append(sec.Charts, c)
		}
	}
	if t := clientVsServer(runs); len(t.Rows) > 0 {
		sec.Tables = append(sec.Tables, t)
	}
	if t := serverQuantiles(runs); len(t.Rows) > 0 {
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}

// serverMeans are the means of the server's own latency histogram of
// role (telemetry.Role "ttft", "itl") between consecutive scrapes, in
// ms, one dashed series per scrape target: Δsum / Δcount over its label
// sets.
func serverMeans(d *runData, role string) []Series {
	type key struct {
		target string
		t      int64
	}
	type agg struct{ sum, count float64 }
	best := map[string]int{} // target → lowest rank of the role present
	for i := range d.metrics {
		m := &d.metrics[i]
		if r, rank := roleOf(m.Metric); r == role {
			if b, ok := best[m.Target]; !ok || rank < b {
				best[m.Target] = rank
			}
		}
	}
	points := map[key]*agg{}
	var keys []key
	for i := range d.metrics {
		m := &d.metrics[i]
		r, rank := roleOf(m.Metric)
		if r != role || rank != best[m.Target] || m.Part != "sum" && m.Part != "count" {
			continue
		}
		k := key{m.Target, m.TimeNS}
		a := points[k]
		if a == nil {
			a = &agg{}
			points[k] = a
			keys = append(keys, k)
		}
		if m.Part == "sum" {
			a.sum += m.Value
		} else {
			a.count += m.Value
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].t < keys[j].t })
	var out []Series
	idx := map[string]int{}
	prev := map[string]*agg{}
	for _, k := range keys {
		a := points[k]
		if p := prev[k.target]; p != nil && a.count > p.count && a.sum >= p.sum {
			i, ok := idx[k.target]
			if !ok {
				label := d.label + " server"
				if len(best) > 1 {
					label += " " + k.target
				}
				i = len(out)
				idx[k.target] = i
				out = append(out, Series{Label: label, Color: d.color, Dash: true})
			}
			out[i].X = append(out[i].X, d.seconds(k.t))
			out[i].Y = append(out[i].Y, 1000*(a.sum-p.sum)/(a.count-p.count))
		}
		prev[k.target] = a
	}
	return out
}

// clientVsServer tabulates summary.json's client_vs_server_mean: the
// client's mean TTFT, ITL and latency against the server's own histogram.
func clientVsServer(runs []*runData) Table {
	t := Table{Caption: "Client against server means (the server's own histograms). The difference is time the client counts and the server's clock does not: " +
		"connecting and uploading the request body, the server's work before it starts its clock (reading and tokenizing the prompt, for vLLM " +
		"the wait before the engine admits it) and the response's way back; not an error of the client's clock.",
		Header: []string{"run", "server", "metric", "client mean (ms)", "server mean (ms)", "outside the server's clock: client − server (ms)"}}
	for _, d := range runs {
		tel, _ := d.summaryJSON["telemetry"].(map[string]any)
		servers, _ := tel["servers"].([]any)
		for _, sv := range servers {
			m, _ := sv.(map[string]any)
			info, _ := m["server"].(map[string]any)
			target, _ := info["target"].(string)
			cmp, _ := m["client_vs_server_mean"].(map[string]any)
			for _, tag := range slices.Sorted(maps.Keys(cmp)) {
				c, _ := cmp[tag].(map[string]any)
				cl, _ := c["client_mean_ms"].(float64)
				se, _ := c["server_mean_ms"].(float64)
				t.Rows = append(t.Rows, []Cell{{Text: d.label}, {Text: target}, {Text: tag}, num(cl), num(se), num(cl - se)})
			}
		}
	}
	return t
}

// --- telemetry ---

// telemetryRoles are the server series plotted over time.
var telemetryRoles = []struct{ role, title, ylabel, explain string }{
	{"running", "Server: requests running", "requests", "The server's own count of requests being processed, per scrape."},
	{"waiting", "Server: requests waiting", "requests", "The server's own queue of requests not yet scheduled, per scrape."},
	{"kv_usage", "Server: KV-cache usage", "% used", "The share of the server's KV cache in use, per scrape."},
	{"hit_rate", "Server: prefix-cache hit ratio", "% of prompt tokens", "Prompt tokens found in the prefix cache over tokens looked up between consecutive scrapes (or the server's own hit-rate gauge)."},
}

type sampleKey struct {
	target, metric string
	t              int64
}

func telemetrySection(runs []*runData, tl timeline) Section {
	sec := Section{ID: "telemetry", Title: "Server and GPU telemetry",
		Explain: "The server's /metrics and the GPUs, on the same time axis as the requests."}
	charts := map[string]*Chart{}
	for _, r := range telemetryRoles {
		c := tl.chart("server-"+slug(r.role), r.title, r.explain, r.ylabel)
		c.Kind, c.X = Lines, nil // per-scrape points, each series its own x
		charts[r.role] = &c
	}
	for _, d := range runs {
		// Sum each family over its label sets per scrape.
		type agg struct{ v, n float64 }
		sums := map[sampleKey]*agg{}
		var keys []sampleKey
		best := map[[2]string]int{} // (target, role) → lowest rank present
		for _, m := range d.metrics {
			if m.Part != "" {
				continue
			}
			role, rank := roleOf(m.Metric)
			k := sampleKey{m.Target, m.Metric, m.TimeNS}
			a := sums[k]
			if a == nil {
				a = &agg{}
				sums[k] = a
				keys = append(keys, k)
			}
			a.v += m.Value
			a.n++
			rk := [2]string{m.Target, role}
			if r, ok := best[rk]; !ok || rank < r {
				best[rk] = rank
			}
		}
		sort.SliceStable(keys, func(i, j int) bool { return keys[i].t < keys[j].t })
		series := map[[2]string]*Series{}
		var order [][2]string
		add := func(target, role string, t int64, v float64) {
			c := charts[role]
			if c == nil {
				return
			}
			sk := [2]string{target, role}
			s := series[sk]
			if s == nil {
				label := d.label
				if nTargets(d) > 1 {
					label += " " + target
				}
				s = &Series{Label: label, Color: d.color}
				series[sk] = s
				order = append(order, sk)
			}
			s.X = append(s.X, d.seconds(t))
			s.Y = append(s.Y, v)
		}
		// Counters for the hit ratio: previous hits and queries per target.
		var hits []hitPoint
		prev := map[string][2]float64{}
		cur := map[string]*[2]float64{}
		for _, k := range keys {
			role, rank := roleOf(k.metric)
			if best[[2]string{k.target, role}] != rank {
				continue // an alias of a metric the server also has under its current name
			}
			a := sums[k]
			switch role {
			case "running", "waiting":
				add(k.target, role, k.t, a.v)
			case "kv_usage", "hit_rate":
				add(k.target, role, k.t, 100*a.v/a.n)
			case "prefix_hits", "prefix_queries":
				c := cur[k.target]
				if c == nil {
					c = &[2]float64{math.NaN(), math.NaN()}
					cur[k.target] = c
				}
				if role == "prefix_hits" {
					c[0] = a.v
				} else {
					c[1] = a.v
				}
				if !math.IsNaN(c[0]) && !math.IsNaN(c[1]) {
					if p, ok := prev[k.target]; ok && c[1] > p[1] && c[0] >= p[0] {
						hits = append(hits, hitPoint{k.target, k.t, c[0] - p[0], c[1] - p[1]})
					}
					prev[k.target] = *c
					cur[k.target] = nil
				}
			}
		}
		for _, h := range hitRatios(hits) {
			add(h.target, "hit_rate", h.t, 100*h.hits/h.queries)
		}
		for _, sk := range order {
			charts[sk[1]].Series = append(charts[sk[1]].Series, *series[sk])
		}
	}
	for _, r := range telemetryRoles {
		if c := charts[r.role]; len(c.Series) > 0 {
			sec.Charts = append(sec.Charts, *c)
		}
	}
	sec.Charts = append(sec.Charts, gpuCharts(runs, tl)...)
	return sec
}

// hitPoint is the prefix cache's hits and queries (tokens) between two
// consecutive scrapes of a target, at the later one.
type hitPoint struct {
	target        string
	t             int64
	hits, queries float64
}

// MinHitShare is the smallest share of a target's median interval of
// prefix-cache queries that an interval needs for its hit ratio to be
// plotted: the last scrape of a run often sees a handful of tokens
// looked up, and a few of them hitting would draw a spike (27 % on one
// request's 300 tokens) that no load caused.
const MinHitShare = 0.25

// hitRatios keeps the intervals whose queries are at least MinHitShare
// of their target's median interval, in order.
func hitRatios(points []hitPoint) []hitPoint {
	per := map[string][]float64{}
	for _, p := range points {
		per[p.target] = append(per[p.target], p.queries)
	}
	median := map[string]float64{}
	for t, q := range per {
		median[t] = summary.Percentile(slices.Sorted(slices.Values(q)), 50)
	}
	var out []hitPoint
	for _, p := range points {
		if p.queries >= MinHitShare*median[p.target] {
			out = append(out, p)
		}
	}
	return out
}

// nTargets counts the scrape targets of a run.
func nTargets(d *runData) int {
	seen := map[string]bool{}
	for i := range d.metrics {
		seen[d.metrics[i].Target] = true
	}
	return len(seen)
}

func gpuCharts(runs []*runData, tl timeline) []Chart {
	defs := []struct {
		id, title, ylabel, explain string
		get                        func(*record.GPUSample) float64
	}{
		{"gpu-power", "GPU power", "W", "Power drawn by each GPU, per sample.", func(g *record.GPUSample) float64 { return g.PowerW }},
		{"gpu-util", "GPU utilisation", "%", "The share of time each GPU was busy, per sample.", func(g *record.GPUSample) float64 { return g.UtilPct }},
		{"gpu-memory", "GPU memory used", "GiB", "Memory in use on each GPU, per sample.", func(g *record.GPUSample) float64 { return g.MemUsedBytes / (1 << 30) }},
	}
	var out []Chart
	for _, def := range defs {
		c := tl.chart(def.id, def.title, def.explain, def.ylabel)
		c.Kind, c.X = Lines, nil
		for _, d := range runs {
			per := map[int32]*Series{}
			var gpus []int32
			for i := range d.gpu {
				g := &d.gpu[i]
				v := def.get(g)
				if math.IsNaN(v) {
					continue
				}
				s := per[g.GPU]
				if s == nil {
					s = &Series{Label: fmt.Sprintf("%s GPU %d", d.label, g.GPU), Color: d.color, Dash: len(gpus) > 0}
					per[g.GPU] = s
					gpus = append(gpus, g.GPU)
				}
				s.X = append(s.X, d.seconds(g.TimeNS))
				s.Y = append(s.Y, v)
			}
			for _, id := range gpus {
				c.Series = append(c.Series, *per[id])
			}
		}
		if len(c.Series) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// --- errors and provenance ---

func errorSection(runs []*runData, tl timeline) Section {
	sec := Section{ID: "errors", Title: "Errors",
		Explain: "Failed requests are data: each has its kind and message in the records (error_kind, error_message)."}
	c := tl.chart("errors-by-kind", "Errors by kind over time", "Failed requests per second by error kind, per {bucket} bucket of their end (never-sent ones at their intended time).", "errors/s")
	t := Table{Caption: "Errors by kind and status (first message)", Header: []string{"run", "kind", "status", "count", "first message"}}
	for _, d := range runs {
		for k := 1; k < len(d.kinds); k++ {
			sums := make([]float64, tl.b.n)
			if k < len(d.sc.errKind) {
				sums = d.sc.errKind[k]
			}
			name := d.kindName(uint8(k))
			c.Series = append(c.Series, Series{Label: d.label + " " + name, Color: kindColor(name), Y: tl.perSecond(sums)})
		}
		for _, e := range d.sum.Errors {
			status := ""
			if e.Status != 0 {
				status = strconv.Itoa(int(e.Status))
			}
			t.Rows = append(t.Rows, []Cell{{Text: d.label}, {Text: string(e.Kind)}, {Text: status}, num(float64(e.Count)), {Text: e.Message}})
		}
	}
	if len(c.Series) > 0 {
		sec.Charts = append(sec.Charts, c)
	}
	if len(t.Rows) > 0 {
		sec.Tables = append(sec.Tables, t)
	}
	return sec
}

// provenanceKeys are the manifest keys the provenance table shows.
var provenanceKeys = []string{"reprise_version", "start_time", "trace", "trace_sha256", "trace_format", "trace_rows",
	"url", "model", "endpoint", "mode", "planned_requests", "streaming", "tokenizer", "goodput", "host", "preflight"}

func provenanceSection(runs []*runData) Section {
	sec := Section{ID: "provenance", Title: "Provenance",
		Explain: "What was run, from which trace, on which machine, by which reprise: each run's manifest.json (docs/format/manifest.md)."}
	t := Table{Header: []string{"key"}}
	for _, d := range runs {
		t.Header = append(t.Header, d.label)
	}
	for _, k := range append([]string{"directory"}, provenanceKeys...) {
		row := []Cell{{Text: k}}
		for _, d := range runs {
			row = append(row, Cell{Text: provenanceValue(d, k)})
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Tables = []Table{t}
	for _, d := range runs {
		if d.manifestRaw == nil {
			continue
		}
		var b bytes.Buffer
		if json.Indent(&b, d.manifestRaw, "", "  ") == nil {
			sec.Details = append(sec.Details, Detail{Summary: d.label + ": manifest.json", Text: b.String()})
		}
	}
	return sec
}

// provenanceValue is manifest key k of run d as text; objects are
// compact JSON.
func provenanceValue(d *runData, k string) string {
	if k == "directory" {
		return d.dir
	}
	v, ok := d.manifest[k]
	if !ok || v == nil {
		return "—"
	}
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		var parts []string
		for _, kk := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, kk+"="+provenanceScalar(kk, x[kk]))
		}
		return strings.Join(parts, " ")
	}
	return provenanceScalar(k, v)
}

// provenanceScalar formats one manifest value: a key ending in _ns as a
// duration (took_ns=100.3ms, not 1.00321883e+08), other numbers as
// written (no exponent for whole numbers), anything else compact.
func provenanceScalar(key string, v any) string {
	switch x := v.(type) {
	case float64:
		if strings.HasSuffix(key, "_ns") && x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			d := time.Duration(x)
			switch {
			case d >= time.Second:
				return d.Round(time.Millisecond).String()
			case d >= time.Millisecond:
				return d.Round(10 * time.Microsecond).String()
			}
			return d.String()
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
