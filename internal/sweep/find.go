package sweep

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/replay"
)

// Why a probe ran (Probe.Why).
const (
	WhySearch   = "search"   // a bracketing or bisection step
	WhyRerun    = "rerun"    // the previous try at this load was invalid
	WhyLengthen = "lengthen" // the previous try passed but was shorter than the probe-length rule
	WhyConfirm  = "confirm"  // a second probe of an end of the converged bracket
	WhyDecide   = "decide"   // a third probe of a load whose two probes disagree
	WhyReprobe  = "reprobe"  // the outcomes were out of order (a pass above a fail)
)

// search is the state of one boundary search.
type search struct {
	s     *sweeper
	f     *FindConfig
	found *Found
	// tries counts the runs at each load; byLoad lists the indices in
	// found.Probes of each load's valid probes.
	tries  map[float64]int
	byLoad map[float64][]int
	// probes counts the probes MaxProbes bounds.
	probes int
}

// find brackets, then bisects, the largest load of cfg.Find.Setting that
// meets the SLOs (see [FindConfig] for the rules).
func (s *sweeper) find(ctx context.Context) error {
	f := s.cfg.Find
	sr := &search{s: s, f: f, found: &Found{Setting: f.Setting}, tries: map[float64]int{}, byLoad: map[float64][]int{}}
	s.res.Found = sr.found
	if w := s.cfg.Table; w != nil {
		fmt.Fprintf(w, "find: max %s from %s, ×%g up or ÷%g down to the floor %s, bisected to within %g, at most %d probes\n",
			f.Setting, formatValue(f.Start), f.Factor, f.Factor, formatValue(f.Floor), f.Precision, f.MaxProbes)
	}
	v, why := f.Start, WhySearch
	for sr.probes < f.MaxProbes {
		stop, err := sr.measure(ctx, v, why)
		if err != nil || stop {
			if err == nil {
				sr.answer()
			}
			return err
		}
		var ok bool
		if v, why, ok = sr.next(); !ok {
			break
		}
	}
	sr.answer()
	return nil
}

// outcome is a load's outcome: the majority of its valid probes, a tie
// failing; decided is false for a tie (its next probe decides).
func (sr *search) outcome(v float64) (pass, decided bool) {
	n, np := 0, 0
	for _, i := range sr.byLoad[v] {
		n++
		if sr.found.Probes[i].Pass {
			np++
		}
	}
	return 2*np > n, 2*np != n
}

// loads are the loads with a valid probe, ascending.
func (sr *search) loads() []float64 {
	var vs []float64
	for v := range sr.byLoad {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// bracket is the lowest failing load (hi) and the highest passing load
// below it (lo); 0 where there is none.
func (sr *search) bracket() (lo, hi float64) {
	vs := sr.loads()
	for _, v := range vs {
		if pass, _ := sr.outcome(v); !pass {
			hi = v
			break
		}
	}
	for _, v := range vs {
		if pass, _ := sr.outcome(v); pass && (hi == 0 || v < hi) {
			lo = v
		}
	}
	return lo, hi
}

func (sr *search) round(v float64) float64 {
	if sr.f.Setting == Concurrency {
		return math.Floor(v)
	}
	return roundSig(v, 4)
}

// next is the load to probe next and why; ok is false when the search is
// done.
func (sr *search) next() (v float64, why string, ok bool) {
	f := sr.f
	vs := sr.loads()
	// A tie is decided first.
	for _, v := range vs {
		if _, decided := sr.outcome(v); !decided && len(sr.byLoad[v]) < maxProbesPerLoad {
			return v, WhyDecide, true
		}
	}
	lo, hi := sr.bracket()
	// Outcomes out of order: re-probe the lowest fail, then the passes
	// above it, lowest first.
	if hi != 0 {
		var above []float64
		for _, v := range vs {
			if pass, _ := sr.outcome(v); pass && v > hi {
				above = append(above, v)
			}
		}
		if len(above) > 0 {
			for _, v := range append([]float64{hi}, above...) {
				if len(sr.byLoad[v]) < maxProbesPerLoad {
					return v, WhyReprobe, true
				}
			}
		}
	}
	switch {
	case lo == 0 && hi == 0:
		return 0, "", false // nothing valid was measured
	case hi == 0:
		return sr.round(lo * f.Factor), WhySearch, true
	case lo == 0:
		if hi <= f.Floor {
			return 0, "", false // every probe down to the floor failed
		}
		return max(sr.round(hi/f.Factor), f.Floor), WhySearch, true
	}
	mid := sr.round((lo + hi) / 2)
	if hi/lo-1 > f.Precision && mid > lo && mid < hi {
		return mid, WhySearch, true
	}
	// Converged: confirm both ends.
	for _, v := range []float64{lo, hi} {
		if len(sr.byLoad[v]) < 2 {
			return v, WhyConfirm, true
		}
	}
	return 0, "", false
}

// measure probes load v until a valid probe is long enough: it re-runs
// an invalid probe (MaxReruns times) and lengthens a pass too short
// (maxLengthen times). stop reports that the load could not be measured.
func (sr *search) measure(ctx context.Context, v float64, why string) (stop bool, err error) {
	s, f, found := sr.s, sr.f, sr.found
	sr.probes++
	if why != WhySearch {
		found.Reprobed++
	}
	invalid, lengthened := 0, 0
	var prev *Probe
	for {
		count, dur := sr.length(v, prev)
		sr.tries[v]++
		p := Point{Names: []string{f.Setting}, Values: []float64{v}}
		st := s.status(p)
		if k := sr.tries[v]; k > 1 {
			st.Name += "_" + tryName + "=" + strconv.Itoa(k)
			st.Dir = filepath.Join(s.cfg.pointsDir(), st.Name)
			if s.cfg.FreshPromptSeed {
				st.PromptSeed = DeriveSeed(s.cfg.Base.Prompts.Seed, st.Name)
			}
		}
		st.RequestCount, st.DurationNS = count, int64(dur)
		s.res.Points = append(s.res.Points, st)
		stp := &s.res.Points[len(s.res.Points)-1]
		row, err := s.point(ctx, p, stp)
		if err != nil || s.res.Interrupted {
			return true, err
		}
		pr := sr.newProbe(row, v, why)
		found.Probes = append(found.Probes, pr)
		idx := len(found.Probes) - 1
		sr.progress(&pr)
		if err := s.save(); err != nil {
			return true, err
		}
		if !pr.Valid {
			found.Invalid++
			invalid++
			if invalid > f.MaxReruns {
				found.Unmeasurable, found.Unmeasured = true, v
				return true, nil
			}
			why = WhyRerun
			if sr.tryDone(v, sr.tries[v]+1) {
				continue // resuming: the re-run is on disk
			}
			if err := pause(ctx, rerunPause(&pr)); err != nil {
				s.res.Interrupted = true
				return true, nil
			}
			continue
		}
		found.Valid++
		if pr.Saturated {
			found.Saturated++
		}
		if pr.Pass && lengthened < maxLengthen && sr.tooShort(&pr) {
			lengthened++
			found.Lengthened++
			prev, why = &found.Probes[idx], WhyLengthen
			continue
		}
		sr.byLoad[v] = append(sr.byLoad[v], idx)
		return false, nil
	}
}

// tryDone reports whether try k at load v is complete on disk (a
// resumed search reads it instead of running it).
func (sr *search) tryDone(v float64, k int) bool {
	p := Point{Names: []string{sr.f.Setting}, Values: []float64{v}}
	name := p.Name()
	if k > 1 {
		name += "_" + tryName + "=" + strconv.Itoa(k)
	}
	dir := filepath.Join(sr.s.cfg.Dir, sr.s.cfg.pointsDir(), name)
	if sr.s.cfg.Runs.multi() {
		return repeatComplete(dir)
	}
	return runComplete(dir)
}

// rerunPause is how long the search waits before running an invalid
// probe again: as long as the probe sent for, within [1 s, 30 s]. What
// makes a client miss its schedule is mostly a spell of other work on
// the machine (a build, a test run, a stall of the virtual machine);
// running again at once would likely land in the same spell.
func rerunPause(p *Probe) time.Duration {
	d := time.Second
	if p.SentRate > 0 && p.Total > 1 {
		d = time.Duration(float64(p.Total-1) / p.SentRate * float64(time.Second))
	}
	return min(max(d, time.Second), 30*time.Second)
}

// pause waits d, or until ctx is done (its error).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// newProbe is the probe of the point just measured.
func (sr *search) newProbe(row *Row, v float64, why string) Probe {
	s := sr.s
	pr := Probe{Point: row.Point, Value: v, Try: sr.tries[v], Why: why, Good: row.Good, Total: row.Requests + row.Errors,
		Fraction: row.GoodFraction, Low: row.GoodLow, High: row.GoodHigh, SLOMet: row.SLOMet,
		Saturated: row.Saturated}
	if row.Saturated {
		pr.Saturation = row.Saturation.Reasons
	}
	// Every run of the point must be valid; the probe shows the first
	// invalid one's numbers (or the first run's).
	for i, m := range s.lastRuns {
		open := replay.Mode(m.sum.Run.Mode) != replay.ModeConcurrency
		val := validity(m, open, sr.f.MaxLateness, sr.f.MinSentShare, s.cfg.Base.MinGoodFraction)
		if i == 0 || (!val.Valid && pr.Validity.Valid) {
			pr.Validity = val
		}
		if i == 0 {
			pr.Streams = m.sum.Load.Streams
		}
	}
	pr.Pass = pr.Valid && pr.SLOMet && !pr.Saturated
	return pr
}

// progress prints one line per probe as it ends.
func (sr *search) progress(p *Probe) {
	w := sr.s.cfg.Table
	if w == nil {
		return
	}
	fmt.Fprintf(w, "find: probe %s (%s): %s\n", p.Point, p.Why, probeVerdict(p))
}

// length is the request count and duration a probe at v gets under the
// probe-length rule (0: the base's); prev is the previous try at v when
// it passed too short.
func (sr *search) length(v float64, prev *Probe) (count int, dur time.Duration) {
	f, o := sr.f, &sr.s.cfg.Base
	if o.Trace.Path != "" || (f.MinRounds == 0 && f.MinProbeTime == 0) {
		return 0, 0
	}
	rate, streams := sr.estimate(v, prev)
	need := float64(f.MinRounds) * streams
	if rate > 0 {
		need = max(need, rate*f.MinProbeTime.Seconds()+1)
	}
	if o.Replay.Duration > 0 && o.Replay.RequestCount == 0 {
		d := max(o.Replay.Duration, f.MinProbeTime)
		if rate > 0 {
			d = max(d, time.Duration(need/rate*float64(time.Second)))
		}
		if d > o.Replay.Duration {
			return 0, d.Round(time.Millisecond)
		}
		return 0, 0
	}
	base := o.Replay.RequestCount
	if base == 0 {
		base = replay.DefaultRequestCount // a synthetic load given no stop
	}
	if n := int(math.Ceil(need)); n > base {
		return n, 0
	}
	return 0, 0
}

// estimate is the send rate and the requests in flight expected at v:
// from prev (a try at v) when given, else from the nearest valid probe
// below v (the in-flight count, and in closed loop the rate, grow in
// proportion to the load below capacity), else none known.
func (sr *search) estimate(v float64, prev *Probe) (rate, streams float64) {
	f := sr.f
	if f.Setting == RequestRate {
		rate = v
	}
	if f.Setting == Concurrency {
		streams = v
	}
	var ref *Probe
	if prev != nil {
		ref = prev
	} else {
		for i := range sr.found.Probes {
			p := &sr.found.Probes[i]
			if p.Valid && p.Value <= v && (ref == nil || p.Value > ref.Value) {
				ref = p
			}
		}
	}
	if ref == nil {
		return rate, streams
	}
	scale := v / ref.Value
	if rate == 0 {
		rate = ref.SentRate * scale
	}
	// A margin of a quarter: a lengthened try is not short again by a
	// little.
	margin := 1.0
	if prev != nil {
		margin = 1.25
	}
	if f.Setting != Concurrency {
		streams = ref.Streams * scale * margin
	}
	return rate, streams
}

// tooShort reports whether a valid passing probe is shorter than the
// probe-length rule asks with its own measurements.
func (sr *search) tooShort(p *Probe) bool {
	f := sr.f
	if sr.s.cfg.Base.Trace.Path != "" || (f.MinRounds == 0 && f.MinProbeTime == 0) {
		return false
	}
	streams := p.Streams
	if f.Setting == Concurrency {
		streams = p.Value
	}
	if float64(p.Total) < float64(f.MinRounds)*streams {
		return true
	}
	// In closed loop the rate was only estimated: check the time sent.
	// (In open loop the count gave the time: rate × T + 1 requests.)
	if f.Setting == Concurrency && p.SentRate > 0 {
		return float64(p.Total-1)/p.SentRate < 0.95*f.MinProbeTime.Seconds()
	}
	return false
}

// answer sets the search's answer and its text.
func (sr *search) answer() {
	found := sr.found
	lo, hi := sr.bracket()
	for _, v := range sr.loads() {
		if pass, _ := sr.outcome(v); pass && hi != 0 && v > hi {
			found.OutOfOrder = append(found.OutOfOrder, formatValue(v)+" above "+formatValue(hi))
		}
	}
	// The probe shown for a load is its last valid one.
	last := func(v float64) *Probe {
		if v == 0 {
			return nil
		}
		ix := sr.byLoad[v]
		return &found.Probes[ix[len(ix)-1]]
	}
	found.Text = sr.s.foundText(found, last(lo), last(hi))
}

func (s *sweeper) foundText(found *Found, lo, hi *Probe) string {
	lvl := strconv.FormatFloat(100*s.cfg.Runs.Level, 'g', -1, 64) + "%"
	describe := func(p *Probe) string {
		t := fmt.Sprintf("%s good %.1f%% [%.1f, %.1f] (%d/%d, %s Wilson)", formatValue(p.Value), 100*p.Fraction,
			100*p.Low, 100*p.High, p.Good, p.Total, lvl)
		if p.Saturated {
			t += ", saturated (" + strings.Join(p.Saturation, ",") + ")"
		}
		return t
	}
	slo := fmt.Sprintf("%q with ≥ %v good", s.cfg.Base.Goodput, s.cfg.Base.MinGoodFraction)
	var t string
	switch {
	case found.Unmeasurable:
		found.Value = 0
		if lo != nil {
			found.Value = lo.Value
		}
		last := found.Probes[len(found.Probes)-1]
		t = fmt.Sprintf("find: cannot measure this load on this machine: %s %s, %d tries in a row where the client did not keep its schedule (last, %s: %s)",
			found.Setting, formatValue(found.Unmeasured), s.cfg.Find.MaxReruns+1, last.Point, strings.Join(last.Reasons, "; "))
		if lo != nil {
			t += fmt.Sprintf("; the largest load measured meeting %s: %s", slo, describe(lo))
		}
		t += "; run reprise on a quieter machine, or with less load on the client (--find-max-lateness raises the lateness budget)"
	case lo == nil && hi != nil && hi.Value <= s.cfg.Find.Floor:
		found.Above = hi.Value
		t = fmt.Sprintf("find: no %s met %s down to %s (the floor): %s", found.Setting, slo, formatValue(s.cfg.Find.Floor), describe(hi))
	case lo == nil && hi != nil:
		found.Above = hi.Value
		t = fmt.Sprintf("find: no %s met %s down to %s, the lowest probed within the %d-probe bound (the floor is %s): %s",
			found.Setting, slo, formatValue(hi.Value), s.cfg.Find.MaxProbes, formatValue(s.cfg.Find.Floor), describe(hi))
	case lo != nil && hi == nil:
		found.Value = lo.Value
		t = fmt.Sprintf("find: max %s ≥ %s (%s): every probe met %s within the %d-probe bound; raise the start or the probe bound",
			found.Setting, formatValue(lo.Value), describe(lo), slo, s.cfg.Find.MaxProbes)
	case lo == nil:
		t = "find: nothing was probed"
	default:
		found.Value, found.Above = lo.Value, hi.Value
		found.Indistinct = lo.Low <= hi.High && hi.Low <= lo.High
		t = fmt.Sprintf("find: max %s = %s meeting %s; the boundary lies in [%s, %s) (±%.1f%%): passes %s; fails %s",
			found.Setting, formatValue(lo.Value), slo, formatValue(lo.Value), formatValue(hi.Value),
			50*(hi.Value-lo.Value)/lo.Value, describe(lo), describe(hi))
		if found.Indistinct {
			t += fmt.Sprintf("; at %s the good fractions of %s and %s cannot be told apart (their intervals overlap): more requests per probe would separate them",
				lvl, formatValue(lo.Value), formatValue(hi.Value))
		}
	}
	if len(found.OutOfOrder) > 0 {
		t += "; outcomes out of order after re-probes: " + strings.Join(found.OutOfOrder, ", ") + " (the answer is the largest pass below the lowest fail)"
	}
	return t + "; " + probeCounts(found)
}

// probeCounts says how many probes ran and what became of them.
func probeCounts(f *Found) string {
	t := fmt.Sprintf("%d probes: %d valid", len(f.Probes), f.Valid)
	if f.Invalid > 0 {
		t += fmt.Sprintf(", %d invalid (the client did not keep its schedule)", f.Invalid)
	}
	t += fmt.Sprintf(", %d saturated", f.Saturated)
	if f.Lengthened > 0 {
		t += fmt.Sprintf(", %d passes too short (re-run longer)", f.Lengthened)
	}
	if f.Reprobed > 0 {
		t += fmt.Sprintf(", %d re-probes (confirmations and disagreements)", f.Reprobed)
	}
	return t
}

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
