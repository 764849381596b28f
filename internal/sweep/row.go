package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// Row is one point of a sweep as the table, sweep.json and sweep.parquet
// show it. Latencies are in ms, rates in requests/s, token rates in
// tokens/s. With several runs per point, every metric is the mean over
// the runs and the counts are totals.
type Row struct {
	// Point is the point's name and directory under points/.
	Point string `json:"point"`
	// Settings are the swept settings' values (the load asked).
	Settings map[string]float64 `json:"settings"`
	// Runs counts the runs measured at the point.
	Runs int `json:"runs"`
	// Requests and Errors count the measured requests that succeeded and
	// failed; ErrorRate is Errors/(Requests+Errors).
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
	// IntendedRate is the rate the schedule meant to send at (load
	// asked, as a rate); SentRate the rate it sent at (summary.json's
	// intended_request_rate and achieved_request_rate).
	IntendedRate float64 `json:"intended_rate"`
	SentRate     float64 `json:"sent_rate"`
	// Throughput is successful requests/s and OutputThroughput output
	// tokens/s over the benchmark duration (the load achieved).
	Throughput       float64 `json:"throughput"`
	OutputThroughput float64 `json:"output_throughput"`
	// Goodput is good requests/s and GoodFraction the fraction of the
	// measured requests that met every SLO, with its Wilson interval
	// (GoodLow, GoodHigh) at the sweep's confidence level; all 0 (and
	// Good false) without SLOs. Good is the pooled count of good
	// requests.
	Goodput      float64 `json:"goodput"`
	Good         int     `json:"good"`
	GoodFraction float64 `json:"good_fraction"`
	GoodLow      float64 `json:"good_low"`
	GoodHigh     float64 `json:"good_high"`
	// SLOMet reports GoodFraction ≥ MinGoodFraction (true without SLOs).
	SLOMet bool `json:"slo_met"`
	// Latency percentiles of the successful requests; 0 where the
	// metric does not exist (no TTFT or ITL without streaming).
	TTFTP50 float64 `json:"ttft_p50_ms"`
	TTFTP99 float64 `json:"ttft_p99_ms"`
	ITLP50  float64 `json:"itl_p50_ms"`
	ITLP99  float64 `json:"itl_p99_ms"`
	E2EP50  float64 `json:"e2e_p50_ms"`
	E2EP99  float64 `json:"e2e_p99_ms"`
	// PerUserTPS is the median output tokens/s of one request (1/ITL).
	PerUserTPS float64 `json:"per_user_tps"`
	// LatenessP99 is the p99 schedule lateness of the client, ms.
	LatenessP99 float64 `json:"lateness_p99_ms"`
	// TotalISL and TotalOSL are the measured input and output tokens.
	TotalISL int64 `json:"total_isl"`
	TotalOSL int64 `json:"total_osl"`
	// Saturation is what the saturation checks measured (the first
	// run's, with several runs) and Saturated their verdict (with
	// several runs: in more than half of them).
	Saturation Saturation `json:"saturation"`
	Saturated  bool       `json:"saturated"`
	// Graded and Correct count the graded requests and those answered
	// right (pooled over the runs); Accuracy is Correct/Graded with its
	// Wilson interval (AccuracyLow, AccuracyHigh) at the sweep's level;
	// all 0 when nothing was graded (docs/design/0021-accuracy.md).
	Graded       int     `json:"graded,omitempty"`
	Correct      int     `json:"correct,omitempty"`
	Accuracy     float64 `json:"accuracy,omitempty"`
	AccuracyLow  float64 `json:"accuracy_low,omitempty"`
	AccuracyHigh float64 `json:"accuracy_high,omitempty"`
}

// AccuracyText is the row's accuracy with its interval in percent
// ("81.0 [72.1, 87.6]"), "" when nothing was graded.
func (r *Row) AccuracyText() string {
	if r.Graded == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", 100*r.Accuracy, 100*r.AccuracyLow, 100*r.AccuracyHigh)
}

// runComplete reports whether dir holds a complete run: a summary.json
// (written at the end of a run) of a run that was not interrupted.
func runComplete(dir string) bool {
	rr, err := arrowio.Open(dir)
	if err != nil {
		return false
	}
	b, err := rr.Summary()
	if err != nil {
		return false
	}
	var s struct {
		RunInfo *summary.RunInfo `json:"run_info"`
	}
	if json.Unmarshal(b, &s) != nil || s.RunInfo == nil {
		return false
	}
	return !s.RunInfo.Cancelled && s.RunInfo.Stopped == "" && rr.Has(arrowio.RecordsTable)
}

// measured is one run directory read back: its summary, recomputed from
// the records exactly as the run computed it, and the saturation
// verdict of its records.
type measured struct {
	sum   *summary.Summary
	sat   Saturation
	sched schedule
	// concurrency is the run's closed-loop concurrency (0: not one).
	concurrency int
}

// readRun reads a complete run directory through arrowio.Open.
func readRun(dir string, tol float64) (*measured, error) {
	rr, err := arrowio.Open(dir)
	if err != nil {
		return nil, err
	}
	set, err := rr.Settings()
	if err != nil {
		return nil, err
	}
	s, err := rr.Summarize(set.Info, set.Options)
	if err != nil {
		return nil, fmt.Errorf("summarize %s: %w", dir, err)
	}
	rp, err := readRunReplay(rr)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var l load
	sc := scheduleAcc{opts: set.Options}
	for r, err := range rr.Requests() {
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
		sc.hold(&r)
		if r.Phase == record.PhaseWarmup || r.IntendedNS == 0 {
			continue
		}
		l.intended = append(l.intended, r.IntendedNS)
		sc.add(&r)
		if r.EndNS != 0 {
			l.end = append(l.end, r.EndNS)
			l.endAt = append(l.endAt, r.IntendedNS)
		}
		if r.OK() && r.FirstTokenNS != 0 {
			l.ttftAt = append(l.ttftAt, r.IntendedNS)
			l.ttft = append(l.ttft, r.TTFTNS)
		}
	}
	open := replay.Mode(s.Run.Mode) != replay.ModeConcurrency
	return &measured{sum: s, sat: judge(&l, open, tol), sched: sc.schedule(rp.shift, set.Options.LateThreshold), concurrency: rp.concurrency}, nil
}

// newRow builds the row of a point from its runs (at least one).
func newRow(p Point, runs []*measured, minGood, level float64) Row {
	r := Row{Point: p.Name(), Settings: map[string]float64{}, Runs: len(runs), SLOMet: true}
	for i, n := range p.Names {
		r.Settings[n] = p.Values[i]
	}
	nSat := 0
	var slos bool
	for _, m := range runs {
		s := m.sum
		r.Requests += s.RequestCount
		r.Errors += s.ErrorRequestCount
		r.Good += s.GoodRequestCount
		r.TotalISL += s.TotalISL
		r.TotalOSL += s.TotalOSL
		slos = slos || len(s.Options.Goodput) > 0
		if a := s.Accuracy; a != nil {
			r.Graded += a.All.Graded
			r.Correct += a.All.Correct
		}
		if m.sat.Saturated() {
			nSat++
		}
	}
	mean := func(get func(*summary.Summary) float64) float64 {
		var sum float64
		for _, m := range runs {
			sum += get(m.sum)
		}
		return sum / float64(len(runs))
	}
	pct := func(tag string, p99 bool) float64 {
		return mean(func(s *summary.Summary) float64 {
			st := s.Metrics[tag]
			switch {
			case st == nil:
				return 0
			case p99:
				return st.P99
			}
			return st.P50
		})
	}
	if n := r.Requests + r.Errors; n > 0 {
		r.ErrorRate = float64(r.Errors) / float64(n)
	}
	r.IntendedRate = mean(func(s *summary.Summary) float64 { return s.IntendedRate })
	r.SentRate = mean(func(s *summary.Summary) float64 { return s.AchievedRate })
	r.Throughput = mean(func(s *summary.Summary) float64 { return s.RequestThroughput })
	r.OutputThroughput = mean(func(s *summary.Summary) float64 { return s.OutputTokenThroughput })
	if slos {
		r.Goodput = mean(func(s *summary.Summary) float64 { return s.Goodput })
		n := r.Requests + r.Errors
		if n > 0 {
			r.GoodFraction = float64(r.Good) / float64(n)
		}
		r.GoodLow, r.GoodHigh = summary.WilsonInterval(r.Good, n, level)
		r.SLOMet = r.GoodFraction >= minGood
	}
	r.TTFTP50, r.TTFTP99 = pct("time_to_first_token", false), pct("time_to_first_token", true)
	r.ITLP50, r.ITLP99 = pct("inter_token_latency", false), pct("inter_token_latency", true)
	r.E2EP50, r.E2EP99 = pct("request_latency", false), pct("request_latency", true)
	r.PerUserTPS = pct("output_token_throughput_per_user", false)
	r.LatenessP99 = pct("schedule_lateness", true)
	r.Saturation = runs[0].sat
	r.Saturated = 2*nSat > len(runs)
	if r.Graded > 0 {
		r.Accuracy = float64(r.Correct) / float64(r.Graded)
		r.AccuracyLow, r.AccuracyHigh = summary.WilsonInterval(r.Correct, r.Graded, level)
		if min, ok := runs[0].sum.Options.MinAccuracy(); ok && r.Accuracy < min {
			r.SLOMet = false // --goodput accuracy:V
		}
	}
	return r
}

// removeIfExists removes a file the sweep writes, ignoring its absence.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
