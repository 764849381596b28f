package sweep

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Saturation defaults (docs/format/sweep.md, "Stop conditions").
const (
	// DefaultSaturationTolerance is τ, the smallest completion deficit
	// and backlog growth that count: a point whose requests completed at
	// under 98 % of the rate they were sent at (by more than the point's
	// own sampling noise, [SaturationZ]), or whose backlog grew by more
	// than 2 % of that rate while TTFT rose, is saturated. 2 % is the
	// resolution of a search ([DefaultFindPrecision]): a deficit below it
	// is a load within the precision of the boundary.
	DefaultSaturationTolerance = 0.02
	// SaturationZ is how many standard errors of its own estimate a
	// completion deficit must exceed to count (one-sided: about 0.1 % of
	// points that keep up would pass it by chance with normal noise).
	SaturationZ = 3.0
	// TTFTRiseFactor: TTFT rises through a point whose last quarter of
	// requests (by intended time) has a median TTFT more than this many
	// times the first quarter's, and at least [TTFTRiseFloorMS] more.
	TTFTRiseFactor = 2.0
	// TTFTRiseFloorMS is the smallest TTFT rise, in ms, that counts:
	// below it the rise is timer noise.
	TTFTRiseFloorMS = 1.0
	// minJudged is the fewest measured requests a point needs for the
	// saturation checks; with fewer, they are not made.
	minJudged = 8
)

// load holds what the saturation checks read from a point's records:
// per measured request (warmup excluded), its intended time, its end
// and, for requests that got a first token, the TTFT, all in ns.
type load struct {
	intended []int64 // every measured request
	end      []int64 // every measured request that ended (EndNS ≠ 0)
	endAt    []int64 // intended time of each of those, in the same order
	ttftAt   []int64 // intended time of requests with a TTFT
	ttft     []int64
}

// Saturation is what the saturation checks measured at one point, and
// their verdict.
type Saturation struct {
	// RateRatio is the completion rate over the intended rate,
	// 1/(1 + g), where g is the least-squares slope of each measured
	// request's time from intended send to end against its intended send
	// time: 0 when the server kept up (response times do not grow
	// through the point), and R/C − 1 when requests arrive at R above a
	// capacity C (each waits 1/C − 1/R longer than the one before), so
	// the ratio is C/R. Only for open-loop modes (0 in concurrency mode,
	// where the client waits for the server).
	RateRatio float64 `json:"rate_ratio"`
	// RateDeficitSE is the standard error of the completion deficit
	// 1 − RateRatio, from the scatter of the response times about their
	// fitted line (see [judge]); the rate check needs the deficit above
	// SaturationZ of it.
	RateDeficitSE float64 `json:"rate_deficit_se"`
	// BacklogSlope is the least-squares slope, in requests/s, of the
	// backlog (requests intended minus requests ended) sampled at each
	// intended time of the second half of the schedule, and
	// BacklogGrowth that slope over the intended rate. Open loop only.
	BacklogSlope  float64 `json:"backlog_slope"`
	BacklogGrowth float64 `json:"backlog_growth"`
	// TTFTFirst and TTFTLast are the median TTFT (ms) of the first and
	// last quarter of the requests with a TTFT, by intended time.
	TTFTFirst float64 `json:"ttft_first_quarter_ms"`
	TTFTLast  float64 `json:"ttft_last_quarter_ms"`
	// Reasons lists the checks that found saturation: "rate" (the
	// deficit 1 − RateRatio above both the tolerance and SaturationZ ×
	// RateDeficitSE); "backlog" and "ttft_rising" together (in open
	// loop, the backlog grew by more than tolerance × the intended rate
	// and TTFT rose by TTFTRiseFactor); "ttft_rising" alone in closed
	// loop. Empty when none did (or too few requests to judge).
	Reasons []string `json:"reasons,omitempty"`
}

// Saturated reports whether any check found saturation.
func (s *Saturation) Saturated() bool { return len(s.Reasons) > 0 }

// judge runs the saturation checks on l. openLoop says whether intended
// times were set by the schedule alone (rate, fixed, user-centric modes):
// only then can a backlog grow or completions fall behind arrivals. tol
// is the rate and backlog tolerance; 0 turns every check off.
func judge(l *load, openLoop bool, tol float64) Saturation {
	var s Saturation
	if len(l.intended) < minJudged || tol <= 0 {
		return s
	}
	in := slices.Clone(l.intended)
	slices.Sort(in)
	ends := slices.Clone(l.end)
	slices.Sort(ends)
	span := float64(in[len(in)-1] - in[0])
	if openLoop && span > 0 && len(ends) >= 2 {
		g, se := growthSlope(l.endAt, l.end)
		g = max(g, -0.5)
		s.RateRatio = 1 / (1 + g)
		// The deficit d = 1 − 1/(1+g) = g/(1+g) has dd/dg = 1/(1+g)², so
		// its standard error is se_g/(1+g)² (the delta method).
		s.RateDeficitSE = se / ((1 + g) * (1 + g))
		rate := float64(len(in)-1) / (span / 1e9)
		s.BacklogSlope = backlogSlope(in, ends)
		s.BacklogGrowth = s.BacklogSlope / rate
		// Below capacity response times do not grow through the point:
		// the true g is 0 and the fitted one is noise of standard error
		// se_g. A deficit counts when the point's own noise cannot explain
		// it (d > SaturationZ·se_d) and it is large enough to matter
		// (d > τ). A fixed τ alone cannot do both: a long point resolves a
		// 3 % deficit (C/R = 0.97, a load 3 % past capacity) that a 10 %
		// tolerance lets pass, and a short, noisy one can show a 5 %
		// deficit by chance.
		if d := 1 - s.RateRatio; d > tol && d > SaturationZ*s.RateDeficitSE {
			s.Reasons = append(s.Reasons, "rate")
		}
	}
	if len(l.ttft) >= minJudged {
		idx := make([]int, len(l.ttft))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return l.ttftAt[idx[a]] < l.ttftAt[idx[b]] })
		q := len(idx) / 4
		first, last := make([]float64, q), make([]float64, q)
		for i := range q {
			first[i] = float64(l.ttft[idx[i]]) / 1e6
			last[i] = float64(l.ttft[idx[len(idx)-q+i]]) / 1e6
		}
		s.TTFTFirst, s.TTFTLast = median(first), median(last)
		rising := s.TTFTLast > TTFTRiseFactor*s.TTFTFirst && s.TTFTLast-s.TTFTFirst >= TTFTRiseFloorMS
		// A burst of late sends queues requests for a while, and either
		// symptom alone follows it; a queue that keeps growing shows
		// both: the backlog rises and the requests at the end wait.
		if rising && s.BacklogGrowth > tol {
			s.Reasons = append(s.Reasons, "backlog", "ttft_rising")
		} else if rising && !openLoop {
			s.Reasons = append(s.Reasons, "ttft_rising")
		}
	}
	return s
}

// growthSlope is the least-squares slope g of end − at against at (how
// many seconds of response time each second of the schedule adds) and
// its standard error.
//
// The standard error is the textbook one, s/√Sxx with s² = Σe²/(n − 2)
// the residuals' variance, widened for the residuals' correlation: a
// slow spell of the machine, or a queue that forms and drains, slows
// several consecutive requests together, so neighbouring residuals are
// alike and the n points carry less than n points of information. With
// lag-1 autocorrelation ρ > 0 of the residuals (in order of at), the
// slope's variance grows by (1 + ρ)/(1 − ρ), the variance inflation of an
// AR(1) error (an effective sample of n(1 − ρ)/(1 + ρ)); ρ is capped at
// 0.9 (a factor of 19). Both are 0 with fewer than three points.
func growthSlope(at, end []int64) (g, se float64) {
	n := len(at)
	if n < 3 {
		return 0, 0
	}
	t0 := float64(at[0])
	x, y := make([]float64, n), make([]float64, n)
	var f lineFit
	for i := range at {
		x[i], y[i] = float64(at[i])-t0, float64(end[i]-at[i])
		f.add(x[i], y[i])
	}
	g = f.slope()
	mx, my := f.sx/f.n, f.sy/f.n
	sxx := f.sxx - f.n*mx*mx
	if sxx <= 0 {
		return g, 0
	}
	a := my - g*mx
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(p, q int) bool { return x[idx[p]] < x[idx[q]] })
	var ssr, lag float64
	prev := 0.0
	for k, i := range idx {
		e := y[i] - a - g*x[i]
		ssr += e * e
		if k > 0 {
			lag += e * prev
		}
		prev = e
	}
	if ssr == 0 {
		return g, 0
	}
	rho := min(max(lag/ssr, 0), 0.9)
	se = math.Sqrt(ssr/float64(n-2)/sxx) * math.Sqrt((1+rho)/(1-rho))
	return g, se
}

// backlogSlope is the least-squares slope (requests/s) of the backlog
// B(t) = #{intended ≤ t} − #{end ≤ t}, sampled at the intended times of
// the second half of the sorted intended times. Both slices are sorted.
func backlogSlope(intended, ends []int64) float64 {
	half := intended[len(intended)/2:]
	if len(half) < 2 {
		return 0
	}
	t0 := float64(half[0])
	var f lineFit
	for i, t := range half {
		arrived := len(intended)/2 + i + 1
		ended, _ := slices.BinarySearchFunc(ends, t, func(e, t int64) int { return cmp.Compare(e, t+1) })
		f.add((float64(t)-t0)/1e9, float64(arrived-ended))
	}
	return f.slope()
}

// lineFit accumulates the sums of a least-squares line through points.
type lineFit struct{ n, sx, sy, sxx, sxy float64 }

func (f *lineFit) add(x, y float64) {
	f.n++
	f.sx, f.sy, f.sxx, f.sxy = f.sx+x, f.sy+y, f.sxx+x*x, f.sxy+x*y
}

// slope is the fitted line's slope; 0 when the points share one x.
func (f *lineFit) slope() float64 {
	den := f.n*f.sxx - f.sx*f.sx
	if den == 0 {
		return 0
	}
	return (f.n*f.sxy - f.sx*f.sy) / den
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
