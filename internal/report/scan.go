package report

import (
	"math"
	"sort"

	"github.com/reprise-bench/reprise/engine/summary"
)

// bucketExact is how many values a time bucket's percentiles keep
// exactly before they move into the summary's sketch.
const bucketExact = 256

// strider picks every step-th of the items it is shown, step =
// ⌈count/limit⌉ for count items in all: exactly the indexes [stride]
// returns, without holding them.
type strider struct{ step, seen int }

func newStrider(count, limit int) strider {
	step := 1
	if count > limit {
		step = (count + limit - 1) / limit
	}
	return strider{step: step}
}

// take reports whether the next item is in the sample.
func (s *strider) take() bool {
	ok := s.seen%s.step == 0
	s.seen++
	return ok
}

// cdfCounter counts values at or below each point of a grid (ascending):
// the empirical CDF at those points, exactly as [cdfAt] computes it from
// the sorted values, without holding them.
type cdfCounter struct {
	grid []float64
	at   []float64 // at[i]: values v with grid[i-1] < v ≤ grid[i]
	n    int
}

func (c *cdfCounter) add(v float64) {
	c.n++
	if i := sort.SearchFloat64s(c.grid, v); i < len(c.grid) {
		c.at[i]++
	}
}

// values is the CDF in percent at each grid point (NaN without values).
func (c *cdfCounter) values() Values {
	out := make(Values, len(c.grid))
	sum := 0.0
	for i := range out {
		if c.n == 0 {
			out[i] = math.NaN()
			continue
		}
		sum += c.at[i]
		out[i] = 100 * sum / float64(c.n)
	}
	return out
}

// scan is the second pass over the run's requests (their reqViews, as
// the first pass spilled them): with the time axis and the CDF grids (one
// per latencyMetrics entry, nil for none) of every run known, it bins and
// samples what the charts show.
func (d *runData) scan(tl timeline, grids [][]float64, maxPoints int) error {
	sn := scanner{d: d, tl: tl, grids: grids, sc: newScanned(tl.b.n, len(grids)), cdfs: make([]cdfCounter, len(grids)),
		okS: newStrider(d.nOK, maxPoints), errS: newStrider(d.nErr, maxPoints), cacheS: newStrider(d.nCache, maxPoints)}
	for i, g := range grids {
		if g != nil {
			sn.cdfs[i] = cdfCounter{grid: g, at: make([]float64, len(g))}
		}
	}
	err := d.views.each(func(vp *reqView) {
		v := *vp
		sn.addCDFs(&v)
		sn.addScatters(&v)
		sn.addLoad(&v)
		sn.addTruth(&v)
		sn.addOverTime(&v)
	})
	if err != nil {
		return err
	}
	sc := sn.sc
	for k := range sc.lateMean {
		if sc.lateN[k] > 0 {
			sc.lateMean[k] /= sc.lateN[k]
		}
	}
	for i := range sn.cdfs {
		if grids[i] != nil {
			sc.cdf[i], sc.cdfN[i] = sn.cdfs[i].values(), sn.cdfs[i].n
		}
	}
	d.sc = sc
	return nil
}

// newScanned returns an empty scanned of nb time buckets and ngrids CDF
// grids; the lateness and lag of every bucket are NaN (no request).
func newScanned(nb, ngrids int) *scanned {
	sc := &scanned{cdf: make([][]float64, ngrids), cdfN: make([]int, ngrids),
		errX: map[uint8][]float64{}, errY: map[uint8][]float64{},
		intended: make([]float64, nb), sent: make([]float64, nb), done: make([]float64, nb), ended: make([]float64, nb),
		toks: make([]float64, nb), lateMax: make([]float64, nb), lateMean: make([]float64, nb), lateN: make([]float64, nb),
		lag: make([]float64, nb), outcomes: make([]float64, nb), failed: make([]float64, nb)}
	for i := range sc.byTime {
		sc.byTime[i] = make([]*summary.Values, nb)
	}
	for k := range nb {
		sc.lateMax[k], sc.lateMean[k], sc.lag[k] = math.NaN(), math.NaN(), math.NaN()
	}
	for i := range sc.client {
		sc.client[i] = [2][]float64{make([]float64, nb), make([]float64, nb)}
	}
	return sc
}

// scanner is the state of one [runData.scan]: what it fills and how it
// samples. Each add method takes one request, in the order of the run.
type scanner struct {
	d                 *runData
	tl                timeline
	grids             [][]float64
	sc                *scanned
	cdfs              []cdfCounter // per grid (zero for a nil grid)
	okS, errS, cacheS strider      // the scatters' samples
}

// at is the time bucket of Unix ns time ns, -1 when ns is 0 or outside
// the axis.
func (sn *scanner) at(ns int64) int { return sn.tl.b.at(sn.d.t0, ns) }

// addCDFs counts a measured successful request in the latency CDFs.
func (sn *scanner) addCDFs(v *reqView) {
	if v.warm || v.kind != 0 {
		return
	}
	for i, m := range latencyMetrics {
		if sn.grids[i] == nil {
			continue
		}
		if x := float64(m.col(v)); x > 0 && !math.IsInf(x, 0) {
			sn.cdfs[i].add(x)
		}
	}
}

// addScatters adds a request to the scatters it is sampled for, evenly
// strided: the ok requests', the failed ones' (by kind), the cache
// errors'.
func (sn *scanner) addScatters(v *reqView) {
	sc := sn.sc
	x := sn.d.seconds(v.intendedOrSent())
	if v.kind == 0 {
		if sn.okS.take() {
			if !math.IsNaN(float64(v.ttft)) {
				sc.ttftX, sc.ttftY = append(sc.ttftX, x), append(sc.ttftY, float64(v.ttft))
				sc.islX, sc.islY = append(sc.islX, float64(v.isl)), append(sc.islY, float64(v.ttft))
			}
			if !math.IsNaN(float64(v.e2e)) {
				sc.oslX, sc.oslY = append(sc.oslX, float64(v.osl)), append(sc.oslY, float64(v.e2e))
			}
		}
	} else if sn.errS.take() {
		y := float64(v.ttft)
		if math.IsNaN(y) && v.end != 0 && v.sent != 0 {
			y = float64(v.end-v.sent) / 1e6
		}
		if math.IsNaN(y) || y <= 0 {
			y = 0.001 // never sent (skipped) or failed at once: drawn at the bottom
		}
		sc.errX[v.kind] = append(sc.errX[v.kind], x)
		sc.errY[v.kind] = append(sc.errY[v.kind], y)
	}
	if !math.IsNaN(float64(v.cacheErr)) && sn.cacheS.take() {
		sc.cacheX, sc.cacheY = append(sc.cacheX, x), append(sc.cacheY, float64(v.cacheErr))
	}
}

// addLoad counts a request in the load buckets: intended, sent, done
// (ok), ended (sent), and its output tokens spread over its stream.
func (sn *scanner) addLoad(v *reqView) {
	sc := sn.sc
	if v.intended != 0 {
		if k := sn.at(v.intended); k >= 0 {
			sc.intended[k]++
		}
	}
	if v.sent != 0 {
		if k := sn.at(v.sent); k >= 0 {
			sc.sent[k]++
		}
	}
	if v.kind == 0 {
		if k := sn.at(v.end); k >= 0 {
			sc.done[k]++
		}
	}
	if v.sent != 0 && v.end != 0 {
		if k := sn.at(v.end); k >= 0 {
			sc.ended[k]++
		}
	}
	if v.osl > 0 && v.first != 0 {
		last := v.last
		if last == 0 {
			last = v.first
		}
		sn.tl.b.spread(sc.toks, sn.d.seconds(v.first), sn.d.seconds(last), float64(v.osl))
	}
}

// addTruth adds a request's lateness (by intended time) and read lag (by
// end time) to the buckets' maximum and mean, and its outcome to the
// error rate (by end time; never sent: intended).
func (sn *scanner) addTruth(v *reqView) {
	sc := sn.sc
	if l := float64(v.lateness); !math.IsNaN(l) {
		if k := sn.at(v.intended); k >= 0 {
			if math.IsNaN(sc.lateMax[k]) {
				sc.lateMax[k], sc.lateMean[k] = l, 0
			}
			sc.lateMax[k] = max(sc.lateMax[k], l)
			sc.lateMean[k] += l
			sc.lateN[k]++
		}
	}
	if l := float64(v.readLag); !math.IsNaN(l) {
		if k := sn.at(v.end); k >= 0 {
			sc.anyLag = true
			if math.IsNaN(sc.lag[k]) || l > sc.lag[k] {
				sc.lag[k] = l
			}
		}
	}
	if t := v.end; t != 0 || v.intended != 0 {
		if t == 0 {
			t = v.intended
		}
		if k := sn.at(t); k >= 0 {
			sc.outcomes[k]++
			if v.kind != 0 {
				sc.failed[k]++
			}
		}
	}
}

// addOverTime adds an ok request's TTFT and ITL to the percentiles (by
// send time) and the client's means (by first and last token) over
// time, and a failed one to its kind's count (by end time; never sent:
// intended).
func (sn *scanner) addOverTime(v *reqView) {
	sc := sn.sc
	if v.kind != 0 {
		for len(sc.errKind) <= int(v.kind) {
			sc.errKind = append(sc.errKind, make([]float64, sn.tl.b.n))
		}
		t := v.end
		if t == 0 {
			t = v.intended
		}
		if k := sn.at(t); k >= 0 {
			sc.errKind[v.kind][k]++
		}
		return
	}
	if k := sn.at(v.intendedOrSent()); k >= 0 {
		for i, x := range [2]float32{v.ttft, v.itl} {
			if math.IsNaN(float64(x)) {
				continue
			}
			if sc.byTime[i][k] == nil {
				sc.byTime[i][k] = summary.NewValues(bucketExact)
			}
			sc.byTime[i][k].Add(float64(x))
		}
	}
	for i, p := range [2]struct {
		v  float32
		at int64
	}{{v.ttft, v.first}, {v.itl, v.last}} {
		if math.IsNaN(float64(p.v)) {
			continue
		}
		if k := sn.at(p.at); k >= 0 {
			sc.client[i][0][k] += float64(p.v)
			sc.client[i][1][k]++
		}
	}
}
