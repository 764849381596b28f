package sweep

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Saturation defaults (docs/format/sweep.md, "Stop conditions").
const (
	// DefaultSaturationTolerance is the tolerance of the rate and
	// backlog checks: a point whose requests completed at under 90 % of
	// the rate they were sent at, or whose backlog grew by more than 10 %
	// of that rate, is saturated.
	DefaultSaturationTolerance = 0.10
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
	// Reasons lists the checks that found saturation: "rate" (RateRatio
	// below 1 − tolerance); "backlog" and "ttft_rising" together (in open
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
		s.RateRatio = 1 / (1 + max(growthSlope(l.endAt, l.end), -0.5))
		rate := float64(len(in)-1) / (span / 1e9)
		s.BacklogSlope = backlogSlope(in, ends)
		s.BacklogGrowth = s.BacklogSlope / rate
		if s.RateRatio < 1-tol {
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

// growthSlope is the least-squares slope of end − at against at: how
// many seconds of response time each second of the schedule adds.
func growthSlope(at, end []int64) float64 {
	if len(at) < 2 {
		return 0
	}
	t0 := float64(at[0])
	var f lineFit
	for i := range at {
		f.add(float64(at[i])-t0, float64(end[i]-at[i]))
	}
	return f.slope()
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
