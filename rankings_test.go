package reprise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// positiveNormalMoments returns the exact mean and standard deviation of
// positiveNormal's draws: K = max(1, ⌈X⌉) for X normal (mean, std)
// truncated to X ≥ 0, so P(K = k) = (Φ(k) − Φ(k−1)) / (1 − Φ(0)) with
// Φ(x) the normal CDF at x, and P(K = 1) starting from Φ(0).
func positiveNormalMoments(mean, std float64) (float64, float64) {
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-mean)/(std*math.Sqrt2)) }
	z := 1 - cdf(0)
	var m1, m2 float64
	for k := 1; float64(k) < mean+12*std; k++ {
		p := (cdf(float64(k)) - cdf(math.Max(0, float64(k-1)))) / z
		m1 += float64(k) * p
		m2 += float64(k*k) * p
	}
	return m1, math.Sqrt(m2 - m1*m1)
}

// sampleMeanSD returns the sample mean and standard deviation of xs.
func sampleMeanSD(xs []int) (float64, float64) {
	var s, s2 float64
	for _, x := range xs {
		s += float64(x)
		s2 += float64(x) * float64(x)
	}
	n := float64(len(xs))
	m := s / n
	return m, math.Sqrt((s2 - n*m*m) / (n - 1))
}

// checkMoments fails unless xs have positiveNormal(mean, std)'s exact
// mean and standard deviation within 4 standard errors.
func checkMoments(t *testing.T, what string, xs []int, mean, std float64) {
	t.Helper()
	wm, ws := positiveNormalMoments(mean, std)
	gm, gs := sampleMeanSD(xs)
	n := float64(len(xs))
	t.Logf("%s: %d draws of mean %.3f, sd %.3f; exact %.3f, %.3f", what, len(xs), gm, gs, wm, ws)
	if math.Abs(gm-wm) > 4*ws/math.Sqrt(n) || math.Abs(gs-ws) > 4*ws/math.Sqrt(2*n) {
		t.Errorf("%s: %d draws of mean %.3f, sd %.3f; want %.3f, %.3f (normal %v ± %v, truncated, rounded up)", what, len(xs), gm, gs, wm, ws, mean, std)
	}
}

// TestPositiveNormal checks AIPerf's positive integer draw against its
// exact moments, including a mean near 0 where the truncation and the
// floor of 1 matter, and that no standard deviation draws nothing.
func TestPositiveNormal(t *testing.T) {
	for _, tc := range []struct{ mean, std float64 }{{5, 2}, {20, 4}, {1, 3}, {550, 100}} {
		rng := rand.New(rand.NewPCG(1, 2))
		xs := make([]int, 20000)
		for i := range xs {
			if xs[i] = positiveNormal(rng, tc.mean, tc.std); xs[i] < 1 {
				t.Fatalf("draw %d", xs[i])
			}
		}
		checkMoments(t, "positiveNormal", xs, tc.mean, tc.std)
	}
	if got := positiveNormal(nil, 2.5, 0); got != 2 { // round half to even, as Python's round
		t.Errorf("positiveNormal(2.5, 0) = %d, want 2", got)
	}
	if got := positiveNormal(nil, 0, 0); got != 1 {
		t.Errorf("positiveNormal(0, 0) = %d, want 1", got)
	}
}

// rankingsShape is what the mock server's oracle saw of one rankings
// request: its passages' lengths and its query's.
type rankingsShape struct {
	passages []int
	query    int
}

// runRankings sends n synthetic rankings requests (TEI /rerank) with
// seed and the variation v, and returns what the server saw of each, by
// request id, checking that the client's token count of each request
// equals the server's.
func runRankings(t *testing.T, srv *mockserver.Server, seed uint64, v RankingsVariation, n int) map[string]rankingsShape {
	t.Helper()
	srv.ResetLog()
	_, reqs := runNative(t, srv, func(o *Options) {
		o.Endpoint, o.BatchSize, o.QueryTokens, o.Rankings = "rerank-tei", 5, 10, v
		o.Replay.Seed, o.Replay.Concurrency = seed, 4
	}, 20, 1, n)
	logs := serverLog(t, srv)
	if len(logs) != n || len(reqs) != n {
		t.Fatalf("%d requests recorded, %d seen by the server; want %d", len(reqs), len(logs), n)
	}
	out := map[string]rankingsShape{}
	for _, l := range logs {
		out[l.ClientRequestID] = rankingsShape{passages: l.InputTokens, query: l.QueryTokens}
		if l.Status != 200 {
			t.Errorf("request %s: status %d %s", l.ClientRequestID, l.Status, l.Error)
		}
	}
	for _, r := range reqs {
		s := out[strconv.FormatUint(r.RequestID, 10)]
		want := 0
		for _, p := range s.passages {
			want += p + s.query
		}
		if int(r.InputTokens) != want {
			t.Errorf("request %d: client counts %d tokens, the server %d", r.RequestID, r.InputTokens, want)
		}
	}
	return out
}

// shapes returns the requests of m, each as one string, sorted.
func shapes(m map[string]rankingsShape) []string {
	out := make([]string, 0, len(m))
	for _, s := range m {
		out = append(out, fmt.Sprint(s.passages, s.query))
	}
	slices.Sort(out)
	return out
}

// TestRankingsVariation replays 200 synthetic rankings requests with
// AIPerf's three standard deviations against the mock server: what its
// oracle log saw of each request (passage count, each passage's tokens,
// the query's) has the asked normal's exact moments (truncated at 0,
// rounded up), the client's token count of each request is the server's,
// the same seed sends the very same requests and another seed others;
// without the standard deviations every request is 5 passages of 20
// tokens and a query of 10.
func TestRankingsVariation(t *testing.T) {
	srv := startMock(t, func(c *mockserver.Config) { c.TTFT, c.ITL = time.Millisecond, 0 })
	const n = 200
	v := RankingsVariation{PassagesStdDev: 2, PassageTokensStdDev: 6, QueryTokensStdDev: 3}
	a := runRankings(t, srv, 7, v, n)
	var counts, lengths, queries []int
	for _, s := range a {
		counts, lengths, queries = append(counts, len(s.passages)), append(lengths, s.passages...), append(queries, s.query)
	}
	checkMoments(t, "passages per request", counts, 5, 2)
	checkMoments(t, "tokens per passage", lengths, 20, 6)
	checkMoments(t, "query tokens", queries, 10, 3)

	// Request ids follow the order the senders took the requests in (4
	// at a time), so the runs are compared as multisets.
	want := shapes(a)
	if got := shapes(runRankings(t, srv, 7, v, n)); !slices.Equal(got, want) {
		t.Errorf("seed 7 twice: the second run sent other requests")
	}
	got := shapes(runRankings(t, srv, 8, v, n))
	if same := len(want) - len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { _, ok := slices.BinarySearch(want, s); return ok })); same > n/10 {
		t.Errorf("seeds 7 and 8 sent %d equal requests of %d", same, n)
	}
	for id, s := range runRankings(t, srv, 7, RankingsVariation{}, 20) {
		if !slices.Equal(s.passages, []int{20, 20, 20, 20, 20}) || s.query != 10 {
			t.Errorf("no variation, request %s: passages %v, query %d", id, s.passages, s.query)
		}
	}
}
