package summary

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/printable"
)

// JSON returns summary.json (docs/format/summary.md): metrics keyed by
// AIPerf tags, each with unit and statistics, plus reprise's own keys.
// Keys are sorted, so equal summaries give identical bytes.
func (s *Summary) JSON() ([]byte, error) {
	m := map[string]any{
		"schema_version":               SchemaVersion,
		"run_info":                     s.Run,
		"request_count":                scalar{"requests", float64(s.RequestCount)},
		"error_request_count":          scalar{"requests", float64(s.ErrorRequestCount)},
		"warmup_request_count":         scalar{"requests", float64(s.WarmupCount)},
		"benchmark_duration":           scalar{"sec", s.BenchmarkDuration.Seconds()},
		"request_throughput":           scalar{"requests/sec", s.RequestThroughput},
		"output_token_throughput":      scalar{"tokens/sec", s.OutputTokenThroughput},
		"total_token_throughput":       scalar{"tokens/sec", s.TotalTokenThroughput},
		"total_isl":                    scalar{"tokens", float64(s.TotalISL)},
		"total_osl":                    scalar{"tokens", float64(s.TotalOSL)},
		"total_reasoning_tokens":       scalar{"tokens", float64(s.TotalReasoning)},
		"intended_request_rate":        scalar{"requests/sec", s.IntendedRate},
		"achieved_request_rate":        scalar{"requests/sec", s.AchievedRate},
		"late_request_count":           scalar{"requests", float64(s.LateCount)},
		"error_rate":                   scalar{"ratio", s.ErrorRate()},
		"retried_request_count":        scalar{"requests", float64(s.Retries)},
		"server_cached_tokens_total":   scalar{"tokens", float64(s.ServerCachedTokens)},
		"expected_cached_tokens_total": scalar{"tokens", float64(s.ExpectedCachedTokens)},
	}
	if !math.IsNaN(s.CacheFidelity) {
		m["cache_fidelity"] = scalar{"ratio", s.CacheFidelity}
	}
	if s.Run.InputsPerRequest > 0 {
		m["input_throughput"] = scalar{"inputs/sec", s.InputThroughput}
		m["input_token_throughput"] = scalar{"tokens/sec", s.InputTokenThroughput}
	}
	if s.TotalMediaItems > 0 || s.TotalAudio > 0 {
		m["total_media_items"] = scalar{"items", float64(s.TotalMediaItems)}
		m["total_media_bytes"] = scalar{"bytes", float64(s.TotalMediaBytes)}
		m["total_audio_seconds"] = scalar{"s", s.TotalAudio.Seconds()}
		m["media_throughput"] = scalar{"items/sec", s.MediaThroughput}
		m["audio_throughput"] = scalar{"audio s/sec", s.AudioThroughput}
	}
	if s.CancelledRequestCount > 0 {
		m["cancelled_request_count"] = scalar{"requests", float64(s.CancelledRequestCount)}
	}
	if s.TotalInputImages > 0 || s.TotalInputAudio > 0 {
		// Multimodal inputs only (design 0022).
		m["total_input_images"] = scalar{"images", float64(s.TotalInputImages)}
		m["input_image_throughput"] = scalar{"images/sec", s.InputImageThroughput}
		m["total_input_audio"] = scalar{"sec", s.TotalInputAudio.Seconds()}
		m["input_audio_throughput"] = scalar{"audio sec/sec", s.InputAudioThroughput}
	}
	if s.Tasks != nil {
		m["tasks"] = s.Tasks.json()
	}
	if s.Accuracy != nil {
		m["accuracy"] = s.Accuracy.json()
	}
	if src := s.oslSources(); len(src) > 0 {
		m["output_tokens_source"] = src
	}
	if len(s.Options.Goodput) > 0 {
		m["good_request_count"] = scalar{"requests", float64(s.GoodRequestCount)}
		m["goodput"] = scalar{"requests/sec", s.Goodput}
		m["good_request_fraction"] = scalar{"ratio", s.GoodRequestFraction}
		slo := map[string]float64{}
		for _, g := range s.Options.Goodput {
			slo[g.Tag] = g.Value
		}
		m["goodput_slos"] = slo
	}
	kinds := map[string]int{}
	for k, v := range s.ErrorsByKind {
		kinds[string(k)] = v
	}
	m["errors_by_kind"] = kinds
	errs := s.Errors
	if errs == nil {
		errs = []ErrorCount{}
	}
	m["error_summary"] = errs
	if s.ErrorsOmitted > 0 {
		m["error_summary_omitted_count"] = scalar{"requests", float64(s.ErrorsOmitted)}
	}
	for tag, st := range s.Metrics {
		m[tag] = st
	}
	if s.Telemetry != nil {
		m["telemetry"] = s.telemetryJSON()
	}
	m["measurement_quality"] = s.Quality()
	m["comparability"] = s.Comparability()
	if len(s.Targets) > 0 {
		ts := make([]json.RawMessage, len(s.Targets))
		for t, sub := range s.Targets {
			b, err := sub.JSON()
			if err != nil {
				return nil, err
			}
			ts[t] = b
		}
		m["targets"] = ts
	}
	if s.Options.Calibration != nil {
		m["calibration"] = s.Options.Calibration
	}
	if len(s.TimeSlices) > 0 {
		ts := make([]map[string]any, len(s.TimeSlices))
		for i, sl := range s.TimeSlices {
			b, err := sl.Summary.JSON()
			if err != nil {
				return nil, err
			}
			ts[i] = map[string]any{"slice_index": sl.Index, "start_ns": sl.StartNS, "end_ns": sl.EndNS, "metrics": json.RawMessage(b)}
		}
		m["time_slices"] = ts
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return append(b, '\n'), nil
}

// outputTags are the metrics of generated output: an embeddings or
// rankings endpoint generates none, so the table leaves them out (they
// would be rows of zeros).
var outputTags = map[string]bool{"output_token_throughput_per_user": true, "e2e_output_token_throughput": true,
	"output_sequence_length": true, "usage_completion_tokens": true, "reasoning_token_count": true,
	"output_length_error": true}

// closedLoop reports whether the run was a closed loop (--concurrency):
// each request is sent when one ends, so there is no intended rate.
func (s *Summary) closedLoop() bool { return s.Run.Mode == "concurrency" }

// WriteTable prints the human summary: one row per metric (avg, min, max,
// p99, p90, p50, std, as AIPerf's console), then the aggregates. Rows
// that cannot apply are left out: the output metrics of an endpoint that
// generates none, the intended rate of a closed loop, and the calibrated
// error column of a run whose measurement quality is degraded (its errors
// are its own then, not the calibration's).
func (s *Summary) WriteTable(w io.Writer) error {
	if err := s.writeMetricTable(w); err != nil {
		return err
	}
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-34s %s\n", k, v) }
	s.writeCounts(&b, line)
	s.writeThroughput(line)
	s.writeRates(line)
	s.writeErrors(line)
	if s.Telemetry != nil {
		s.writeTelemetry(&b)
	}
	s.writeQuality(&b, line)
	s.writeComparability(&b)
	// Messages, names and URLs came from a server or a file (summarize
	// reads summary.json): no control character of theirs reaches the
	// terminal.
	_, err := io.WriteString(w, printable.Text(b.String()))
	return err
}

// writeMetricTable prints the table of metrics, one row for each that
// applies, with the calibrated error column when the measurement quality
// is good.
func (s *Summary) writeMetricTable(w io.Writer) error {
	show := func(tag string) bool {
		_, ok := s.Metrics[tag]
		return ok && !(outputTags[tag] && s.noOutput())
	}
	width := len("Metric")
	for _, m := range tableMetrics {
		if show(m.tag) {
			width = max(width, len([]rune(m.header))+len(m.unit)+3)
		}
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	q := s.Quality()
	cal := s.Options.Calibration
	if q.Verdict != QualityGood {
		cal = nil // the column is left out; writeQuality says why
	}
	errCol := ""
	if cal != nil {
		errCol = "±err p99\t" // the calibrated timing error beside TTFT, ITL and E2E
	}
	fmt.Fprintf(tw, "%s\tavg\tmin\tmax\tp99\tp90\tp50\tstd\t%s\n", pad("Metric"), errCol)
	for _, m := range tableMetrics {
		if !show(m.tag) {
			continue
		}
		st := s.Metrics[m.tag]
		e := ""
		if cal != nil {
			e = "\t"
			if eb, ok := cal.Errors[m.tag]; ok {
				e = "±" + num(eb.P99) + "\t"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", pad(m.header+" ("+m.unit+")"),
			num(st.Avg), num(st.Min), num(st.Max), num(st.P99), num(st.P90), num(st.P50), num(st.Std), e)
	}
	return tw.Flush()
}

// writeCounts prints whether percentiles are approximate, why the run
// stopped early, and the counts of requests, accuracy and tasks.
func (s *Summary) writeCounts(b *strings.Builder, line func(k, v string)) {
	for _, m := range metrics {
		if st, ok := s.Metrics[m.tag]; ok && st.Approximate {
			fmt.Fprintf(b, "Percentiles of metrics with more than %d values are approximate (within %g %% relative).\n",
				ExactValues, st.RelativeError*100)
			break
		}
	}
	if s.Run.Stopped != "" {
		line("Stopped early", s.Run.Stopped)
	}
	line("Requests (ok / errors / warmup)", fmt.Sprintf("%d / %d / %d", s.RequestCount, s.ErrorRequestCount, s.WarmupCount))
	if s.CancelledRequestCount > 0 {
		line("Cancelled as planned (requests)", strconv.Itoa(s.CancelledRequestCount))
	}
	if x := s.Accuracy; x != nil {
		accLine := func(name string, st AccuracyStat) {
			v := fmt.Sprintf("%.1f %% (%d / %d; 95 %% CI %.1f–%.1f %%)", 100*st.Accuracy, st.Correct, st.Graded, 100*st.Low, 100*st.High)
			if st.Failed > 0 || st.Unanswered > 0 {
				v += fmt.Sprintf(", %d failed, %d unanswered", st.Failed, st.Unanswered)
			}
			line(name, v)
		}
		accLine("Accuracy", x.All)
		if len(x.Tasks) > 1 {
			for _, t := range x.Tasks {
				accLine("  "+truncate(t.Task, 32), t)
			}
		}
	}
	if t := s.Tasks; t != nil {
		line("Tasks (completed / all)", fmt.Sprintf("%d / %d", t.Completed, t.Count))
		line("Task completion (ms, p50 / p99)", num(t.Completion.P50)+" / "+num(t.Completion.P99))
		line("Critical path server / wait (ms, p50)", num(t.CriticalServer.P50)+" / "+num(t.CriticalWait.P50))
	}
}

// writeThroughput prints the endpoint's inputs and media, the benchmark
// duration, the request, token, image and audio throughputs, and where
// the output token counts came from.
func (s *Summary) writeThroughput(line func(k, v string)) {
	if s.Run.InputsPerRequest > 0 {
		line("Endpoint kind", fmt.Sprintf("%s, %d inputs per request", s.Run.EndpointKind, s.Run.InputsPerRequest))
		line("Input throughput (inputs/s)", num(s.InputThroughput))
		line("Input token throughput (tok/s)", num(s.InputTokenThroughput))
	}
	if s.TotalMediaItems > 0 || s.TotalAudio > 0 {
		line("Endpoint kind", s.Run.EndpointKind)
		line("Media (items / MB)", fmt.Sprintf("%d / %s", s.TotalMediaItems, num(float64(s.TotalMediaBytes)/1e6)))
		line("Media throughput (items/s)", num(s.MediaThroughput))
		if s.TotalAudio > 0 {
			line("Audio (s) / audio throughput (audio s/s)", num(s.TotalAudio.Seconds())+" / "+num(s.AudioThroughput))
		}
	}
	line("Benchmark duration (s)", num(s.BenchmarkDuration.Seconds())+" (first send to last response)")
	line("Request throughput (req/s)", num(s.RequestThroughput)+" (ok requests / benchmark duration)")
	if !s.noOutput() {
		line("Output token throughput (tok/s)", num(s.OutputTokenThroughput))
	}
	line("Total token throughput (tok/s)", num(s.TotalTokenThroughput))
	if s.TotalInputImages > 0 {
		line("Input images (images/s)", num(s.InputImageThroughput)+fmt.Sprintf(" (%d images)", s.TotalInputImages))
	}
	if s.TotalInputAudio > 0 {
		line("Input audio (audio s/s)", num(s.InputAudioThroughput)+fmt.Sprintf(" (%s of audio)", num(s.TotalInputAudio.Seconds())))
	}
	if src := s.oslSources(); len(src) > 0 && !s.noOutput() {
		var parts []string
		for _, k := range []record.TokenSource{record.TokensServer, record.TokensClient, record.TokensEvents} {
			if n := src[k.String()]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s for %d requests", oslSourceNames[k], n))
			}
		}
		line("Output tokens (OSL, ITL) from", strings.Join(parts, "; "))
	}
}

// writeRates prints the send rates, the late requests, goodput, the
// cache fidelity, how far the server's prompt lengths are from the asked
// ones, and the re-sent requests.
func (s *Summary) writeRates(line func(k, v string)) {
	switch {
	case s.closedLoop() && s.AchievedRate > 0:
		// Each request is sent when one ends: the only rate is the sends'.
		line("Send rate (req/s)", num(s.AchievedRate)+" (sends / send window, first to last send; a closed loop has no intended rate)")
	case s.IntendedRate > 0 || s.AchievedRate > 0:
		intended := num(s.IntendedRate)
		if s.IntendedRate == 0 {
			intended = "— (all due at once)"
		}
		line("Send rate intended / achieved", intended+" / "+num(s.AchievedRate)+" req/s (sends / send window, first to last send)")
	}
	line(fmt.Sprintf("Late requests (> %v)", s.Options.LateThreshold), fmt.Sprintf("%d", s.LateCount))
	if len(s.Options.Goodput) > 0 {
		var slo []string
		for _, g := range s.Options.Goodput {
			slo = append(slo, fmt.Sprintf("%s:%g", g.Tag, g.Value))
		}
		line("Goodput SLOs", strings.Join(slo, " "))
		line("Good requests / fraction", fmt.Sprintf("%d / %s", s.GoodRequestCount, num(s.GoodRequestFraction)))
		line("Goodput (req/s)", num(s.Goodput))
	}
	if s.ExpectedCachedTokens > 0 || s.ServerCachedTokens > 0 {
		f := "n/a"
		if !math.IsNaN(s.CacheFidelity) {
			f = num(s.CacheFidelity)
		}
		line("Cached tokens server / expected", fmt.Sprintf("%d / %d (fidelity %s)", s.ServerCachedTokens, s.ExpectedCachedTokens, f))
	}
	if st, ok := s.Metrics["input_length_error"]; ok {
		// The server counted other prompt lengths than were asked: the
		// client's tokenizer is not the server's, or a chat template adds
		// tokens that ISLCorrection does not take off.
		c := float64(s.Options.ISLCorrection)
		if st.Min != c || st.Max != c {
			line("Server minus asked prompt tokens", fmt.Sprintf("avg %s, min %s, max %s: prompts are not the asked lengths for this server; use the model's tokenizer (--tokenizer FILE or server), or --isl-correction for a chat template",
				num(st.Avg-c), num(st.Min-c), num(st.Max-c)))
		}
	}
	if s.Retries > 0 {
		line("Re-sent (never reached server)", fmt.Sprintf("%d", s.Retries))
	}
}

// writeErrors prints the errors by kind, up to three examples, and how
// many were not itemized.
func (s *Summary) writeErrors(line func(k, v string)) {
	if len(s.ErrorsByKind) == 0 {
		return
	}
	kinds := make([]string, 0, len(s.ErrorsByKind))
	for k := range s.ErrorsByKind {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.ErrorsByKind[record.ErrorKind(k)]))
	}
	line("Errors by kind", strings.Join(parts, ", "))
	for i, e := range s.Errors {
		if i == 3 {
			break
		}
		line("  e.g. "+string(e.Kind), truncate(printable.Line(e.Message), 100))
	}
	if s.ErrorsOmitted > 0 {
		line("  not itemized", fmt.Sprintf("%d (beyond %d kind/status pairs)", s.ErrorsOmitted, MaxErrorEntries))
	}
}

// writeQuality prints the measurement-quality verdict, its reasons, and
// the calibration the run applied.
func (s *Summary) writeQuality(b *strings.Builder, line func(k, v string)) {
	q := s.Quality()
	if cal := s.Options.Calibration; cal != nil {
		line("Calibration", fmt.Sprintf("%s (%s, made %s%s): errors within ±%s ms up to %s streams, %s events/s, %s req/s",
			cal.File, cal.Host, cal.Created.Format(time.DateOnly), calibrationAge(cal.Created, s.Run.Start), num(cal.MaxErrorMS),
			num(cal.SafeLoad.Streams), num(cal.SafeLoad.EventsPerSec), num(cal.SafeLoad.RequestsPerSec)))
		switch {
		case q.Evidence.SafeLoad != nil && len(q.Evidence.Load.Past(*q.Evidence.SafeLoad)) > 0:
			fmt.Fprintf(b, "WARNING: this run went past the load this machine was calibrated for: the calibration's errors do not hold for it (no ±err column)\n")
		case q.Verdict != QualityGood:
			fmt.Fprintf(b, "note: no ±err column: the measurement quality is degraded (below), so this run's timing errors are its own, not the calibration's\n")
		}
	}
	if q.Verdict == QualityGood {
		line("Measurement quality", q.Verdict)
		return
	}
	line("Measurement quality", q.Verdict+":")
	for _, r := range q.Reasons {
		fmt.Fprintf(b, "  - %s\n", r)
	}
}

// writeComparability prints each problem [Summary.Comparability] found,
// the run's and each target's, as WARNING lines.
func (s *Summary) writeComparability(b *strings.Builder) {
	for _, w := range s.Comparability().Warnings {
		fmt.Fprintf(b, "WARNING: %s\n", w)
	}
	for t, sub := range s.Targets {
		for _, w := range sub.Comparability().Warnings {
			if strings.HasPrefix(w, "shared server") {
				continue // the run's own check names the target's server
			}
			fmt.Fprintf(b, "WARNING: target %d: %s\n", t, w)
		}
	}
}

// oslSourceNames are the table's words for the token sources.
var oslSourceNames = map[record.TokenSource]string{
	record.TokensServer: "server usage",
	record.TokensClient: "client tokenizer",
	record.TokensEvents: "content events",
}

// oslSources is summary.json's output_tokens_source: ok requests by the
// source of their output length; nil when there are none.
func (s *Summary) oslSources() map[string]int {
	var m map[string]int
	for k, n := range s.OSLSources {
		if n > 0 && k != int(record.TokensUnknown) {
			if m == nil {
				m = map[string]int{}
			}
			m[record.TokenSource(k).String()] = n
		}
	}
	return m
}

// calibrationAge says how long before the run's start the calibration
// was made (", 3d 4h before the run"); empty when the run has no start.
func calibrationAge(created, start time.Time) string {
	if start.IsZero() || created.IsZero() {
		return ""
	}
	d := start.Sub(created)
	if d < 0 {
		return ", after the run started"
	}
	days, hours := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	switch {
	case days > 0:
		return fmt.Sprintf(", %dd %dh before the run", days, hours)
	case hours > 0:
		return fmt.Sprintf(", %dh %dm before the run", hours, int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf(", %dm before the run", int(d/time.Minute))
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Duration formats d in ms for messages.
func Duration(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }
