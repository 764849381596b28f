package compare

import (
	"fmt"
	"math"
	"strings"
)

// sideNoise is what the runs of one side say of their own measurement
// error, in ms; NaN where no run says.
type sideNoise struct {
	// calibration is the largest calibrated p99 error bound of the runs.
	calibration float64
	// client is the largest client read lag p90 or schedule lateness
	// p99 of the runs.
	client float64
	// degradedLag and degradedLate are the client read lag p90 and the
	// schedule lateness p99 of the runs whose measurement quality was
	// degraded, averaged over all the side's runs (a good run adds 0): a
	// side's value is the mean of its runs', so a run's error moves it by
	// a share; 0 when no run was degraded.
	degradedLag, degradedLate float64
	// labels of the degraded runs.
	degradedRuns []string
}

// noiseOf gathers the noise of runs.
func noiseOf(runs []*Run) sideNoise {
	n := sideNoise{calibration: math.NaN(), client: math.NaN()}
	for _, r := range runs {
		c := r.noise
		n.calibration = nanMax(n.calibration, c.calibrationMS)
		delay := nanMax(c.readLagP90, c.latenessP99)
		n.client = nanMax(n.client, delay)
		if c.degraded {
			n.degradedLag += zeroNaN(c.readLagP90) / float64(len(runs))
			n.degradedLate += zeroNaN(c.latenessP99) / float64(len(runs))
			n.degradedRuns = append(n.degradedRuns, r.Label)
		}
	}
	return n
}

// nanMax is the larger of a and b, NaN only when both are.
func nanMax(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Max(a, b)
}

func zeroNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// noiseFloor is the smallest change of metric d (in its unit) that
// counts as one, and what sets it: the larger of
//   - the minimum effect, a share of A (--min-effect);
//   - for a latency, the p99 timing error bound of a calibration a run
//     applied (reprise selftest): what the client cannot tell apart;
//   - for a latency, when a side has a single run (run-to-run variation
//     unmeasured), the largest client read lag p90 or schedule lateness
//     p99 of the runs: the scale of what the machine did to the client
//     during them, which it does differently from one run to the next.
func noiseFloor(d metricDef, a, minEffect float64, na, nb sideNoise, unreplicated bool) (float64, string) {
	floor := minEffect * math.Abs(a)
	why := fmt.Sprintf("the %g%% minimum effect", minEffect*100)
	if d.unit != "ms" {
		return floor, why
	}
	if c := nanMax(na.calibration, nb.calibration); c > floor {
		floor, why = c, "the calibrated p99 timing error"
	}
	if unreplicated {
		if c := nanMax(na.client, nb.client); c > floor {
			floor, why = c, "the runs' own client read lag p90 or schedule lateness p99, with run-to-run variation unmeasured"
		}
	}
	return floor, why
}

// degradation is how far a degraded measurement may have moved metric d
// (in its unit): for a latency, the sum over the two sides of their
// degraded runs' client read lag p90, each side's averaged over its runs
// (a read that waited stamps its tokens late; each side's error may go
// either way); for a rate, the sides' lateness p99 so averaged, as a
// share of the shorter benchmark duration, times A (late sends stretch
// the run); 0 for a ratio (error rate, cache hit ratio), which the
// client's timing does not move, and when no run was degraded.
func degradation(d metricDef, a float64, na, nb sideNoise, durA, durB float64) float64 {
	if len(na.degradedRuns)+len(nb.degradedRuns) == 0 {
		return 0
	}
	switch d.unit {
	case "ms":
		return na.degradedLag + nb.degradedLag
	case "req/s", "tokens/s":
		dur := math.Min(durA, durB) * 1000
		if !(dur > 0) {
			return 0
		}
		return (na.degradedLate + nb.degradedLate) / dur * math.Abs(a)
	}
	return 0
}

// notes says how far the verdicts of r reach.
func notes(r *Result, na, nb sideNoise) []string {
	var out []string
	var single []string
	if r.RunsA == 1 {
		single = append(single, "A")
	}
	if r.RunsB == 1 {
		single = append(single, "B")
	}
	if r.PairedBy == "fan-out request" {
		out = append(out, "two targets of one fan-out run: each request went to both at the same instant, so what the machine did met both alike")
	} else if len(single) > 0 {
		out = append(out, fmt.Sprintf("one run on side %s: run-to-run variation is unmeasured; a latency change must also pass the runs' own client read lag and lateness (the noise floor). Give each side several runs (reprise compare A1 A2 A3 vs B1 B2 B3) to measure it",
			strings.Join(single, " and ")))
	}
	for _, s := range []struct {
		name string
		n    sideNoise
	}{{"A", na}, {"B", nb}} {
		if len(s.n.degradedRuns) > 0 {
			out = append(out, fmt.Sprintf("%s: measurement degraded in %s (client read lag p90 up to %.3g ms, schedule lateness p99 up to %.3g ms): a change no larger than what that may account for is inconclusive",
				s.name, strings.Join(s.n.degradedRuns, ", "), s.n.degradedLag, s.n.degradedLate))
		}
	}
	fam := 0
	for _, m := range r.Metrics {
		if m.Verdict != NotAvailable {
			fam++
		}
	}
	if fam > 1 {
		out = append(out, fmt.Sprintf("the %d intervals hold together at %g%% (each cuts %.2g%% of resamples from each end), so the chance that any metric is called changed by noise alone is at most %.3g%%",
			fam, r.Level*100, r.Tail*100, (1-r.Level)*100))
	}
	return out
}

// groupSide describes the runs of one side: the first run's label and
// facts, the requests of all, the mean benchmark duration.
func groupSide(runs []*Run) Side {
	s := runs[0].side()
	if len(runs) == 1 {
		return s
	}
	var dur float64
	s.Requests = 0
	for _, r := range runs {
		x := r.side()
		s.Requests += x.Requests
		dur += x.DurationS
		s.Runs = append(s.Runs, r.Label)
	}
	s.DurationS = dur / float64(len(runs))
	s.Label = fmt.Sprintf("%s (+%d runs)", runs[0].Label, len(runs)-1)
	return s
}

// replicateWarnings says why run x may not be a replicate of run first
// on the same side: a different trace, model or client host.
func replicateWarnings(name string, first, x *Run) []string {
	var w []string
	if x.TraceSHA256 != first.TraceSHA256 {
		w = append(w, fmt.Sprintf("%s: %s replayed another load than %s (trace_sha256 %q vs %q): not replicates", name, x.Label, first.Label, short(x.TraceSHA256), short(first.TraceSHA256)))
	}
	if x.Model != first.Model {
		w = append(w, fmt.Sprintf("%s: %s used model %q, %s %q: not replicates", name, x.Label, x.Model, first.Label, first.Model))
	}
	if x.Host != first.Host {
		w = append(w, fmt.Sprintf("%s: %s ran on client host %q, %s on %q", name, x.Label, x.Host, first.Label, first.Host))
	}
	return w
}

// qualityWarnings are run x's measurement-quality warnings.
func qualityWarnings(name string, x *Run) []string {
	var w []string
	for _, q := range x.inputs {
		w = append(w, name+" "+x.Label+": not comparable: "+q)
	}
	for _, q := range x.quality {
		w = append(w, name+" "+x.Label+": "+q)
	}
	return w
}
