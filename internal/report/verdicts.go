package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/exitcode"
)

// check is one verdict of a run: what was measured, against which limit.
type check struct {
	name, value, limit string
	failed             bool
	code               int  // the exit code a failure gives
	unknown            bool // the limit is not recorded: judged neither way
	warn               bool // a doubt that sets no exit code
}

// limits are the run's verdict limits, from its manifest: ok false when
// the manifest does not record one.
func (d *runData) floatLimit(key string) (float64, bool) {
	v, ok := d.manifest[key].(float64)
	return v, ok
}

// maxLateness is the manifest's replay.max_lateness, 0 when absent or
// not set (no budget).
func (d *runData) maxLateness() time.Duration {
	rp, _ := d.manifest["replay"].(map[string]any)
	s, _ := rp["max_lateness"].(string)
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return v
}

// checks judges the run as `reprise replay` did when it ended, in the
// same order (package reprise, Run's verdicts): interrupted, lateness
// over budget, nothing succeeded, error rate, goodput. The exit code is
// the first failure's (internal/exitcode). Lateness is judged on the
// records' p99 schedule lateness, which the dispatcher's own histogram
// gives within 1/64.
func (d *runData) checks() []check {
	s := d.sum
	var out []check
	run := check{name: "run completed", value: "yes", limit: "not interrupted"}
	if s.Run.Cancelled {
		run.value, run.failed, run.code = "interrupted: partial results", true, exitcode.RunError
	}
	out = append(out, run)

	// Without a budget the lateness is judged neither way, but a p99
	// past the measurement's own lateness threshold (--late-threshold,
	// 1 ms) is a doubt: never shaded as passed.
	late := check{name: "p99 schedule lateness", limit: "no budget (--max-lateness 0)", value: "no requests", unknown: true}
	if st, ok := s.Metrics["schedule_lateness"]; ok {
		late.value = fmtMS(st.P99)
		budget := s.Options.LateThreshold
		if budget == 0 {
			budget = time.Millisecond
		}
		if st.P99 > float64(budget)/1e6 {
			late.warn = true
			late.limit += "; over the " + budget.String() + " lateness threshold: requests left later than the schedule said"
		}
	}
	if ml := d.maxLateness(); ml > 0 {
		late.unknown, late.warn = false, false
		late.limit = "≤ " + ml.String()
		if st, ok := s.Metrics["schedule_lateness"]; ok && st.P99 > float64(ml)/1e6 {
			late.failed, late.code = true, exitcode.Lateness
		}
	}
	out = append(out, late)

	n := s.RequestCount + s.ErrorRequestCount
	succ := check{name: "requests succeeded", value: fmt.Sprintf("%d of %d", s.RequestCount, n), limit: "at least one"}
	if s.RequestCount == 0 && s.ErrorRequestCount > 0 {
		succ.failed, succ.code = true, exitcode.RunError
	}
	out = append(out, succ)

	er := check{name: "error rate", value: fmt.Sprintf("%.4g %% (%d failed)", 100*s.ErrorRate(), s.ErrorRequestCount)}
	if lim, ok := d.floatLimit("max_error_rate"); ok {
		er.limit = fmt.Sprintf("≤ %.4g %% (--max-error-rate %v)", 100*lim, lim)
		er.failed, er.code = s.ErrorRate() > lim, exitcode.SLOBreach
	} else {
		er.limit, er.unknown = "not recorded in the manifest", true
	}
	out = append(out, er)

	if slos := s.Options.Goodput; len(slos) > 0 {
		parts := make([]string, len(slos))
		for i, g := range slos {
			parts[i] = g.Tag + " ≤ " + strconv.FormatFloat(g.Value, 'g', -1, 64)
		}
		gp := check{name: "goodput (" + strings.Join(parts, ", ") + ")",
			value: fmt.Sprintf("%.4g %% good, %.4g req/s", 100*s.GoodRequestFraction, s.Goodput)}
		if lim, ok := d.floatLimit("min_good_fraction"); ok {
			gp.limit = fmt.Sprintf("≥ %.4g %% (--min-good-fraction %v)", 100*lim, lim)
			gp.failed, gp.code = s.GoodRequestFraction < lim, exitcode.SLOBreach
		} else {
			gp.limit, gp.unknown = "not recorded in the manifest", true
		}
		out = append(out, gp)
	} else {
		out = append(out, check{name: "goodput", value: "no SLOs set (--goodput)", limit: "—", unknown: true})
	}
	// Measurement quality says whether the timestamps can be trusted; it
	// sets no exit code.
	q := s.Quality()
	mq := check{name: "measurement quality", value: q.Verdict, limit: "—", warn: q.Verdict != summary.QualityGood}
	if len(q.Reasons) > 0 {
		mq.value += ": " + strings.Join(q.Reasons, "; ")
	}
	out = append(out, mq)
	// Comparable inputs: a shared server or a warm prefix cache, as
	// summary.json's comparability found them (the summary recomputed
	// here has no server counters); it sets no exit code.
	warnings := s.Comparability().Warnings
	if c, ok := d.summaryJSON["comparability"].(map[string]any); ok {
		warnings = warnings[:0]
		ws, _ := c["warnings"].([]any)
		for _, w := range ws {
			if t, ok := w.(string); ok {
				warnings = append(warnings, t)
			}
		}
	}
	ci := check{name: "comparable inputs", value: "no shared server or warm prefix cache found", limit: "—"}
	if len(warnings) > 0 {
		ci.value, ci.warn = "not comparable: "+strings.Join(warnings, "; "), true
	}
	out = append(out, ci)
	return out
}

// exitCode is the exit code the checks give: the first failure's, else 0.
func exitCode(cs []check) int {
	for _, c := range cs {
		if c.failed {
			return c.code
		}
	}
	return exitcode.OK
}

// fmtMS formats milliseconds for a table.
func fmtMS(ms float64) string { return strconv.FormatFloat(ms, 'g', 4, 64) + " ms" }
