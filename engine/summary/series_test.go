package summary

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

// TestSeriesExactUpToLimit: up to the limit a series is Compute over its
// values, bit for bit; one more value makes it approximate.
func TestSeriesExactUpToLimit(t *testing.T) {
	const limit = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	var s series
	var vals []float64
	for range limit {
		v := rng.ExpFloat64() * 100
		s.add(v, limit)
		vals = append(vals, v)
	}
	if got, want := s.stats(), Compute(slices.Clone(vals)); got != want {
		t.Fatalf("at the limit:\n got %+v\nwant %+v", got, want)
	}
	// stats does not reorder the values it keeps.
	if !slices.Equal(s.vals, vals) {
		t.Fatal("stats changed the kept values")
	}
	s.add(1, limit)
	if st := s.stats(); !st.Approximate || st.RelativeError != SketchRelativeAccuracy || st.Count != limit+1 || s.vals != nil {
		t.Fatalf("past the limit: %+v (kept %d values)", st, len(s.vals))
	}
}

// TestSeriesSketchBound checks approximate percentiles against a sorted
// oracle: each is within α of one of the two order statistics around
// r = (n−1)·p/100, and min, max, count, sum, avg and std match the exact
// ones to rounding.
func TestSeriesSketchBound(t *testing.T) {
	const n, limit = 200_000, 1000
	dists := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"lognormal ms", func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()*1.5 + 3) }},
		{"uniform", func(r *rand.Rand) float64 { return r.Float64() * 1000 }},
		// Signed with zeros: server minus client token counts.
		{"signed integers", func(r *rand.Rand) float64 { return float64(r.IntN(41) - 20) }},
		// ns-resolution ms, spanning 1 ns to about an hour.
		{"ns to hours", func(r *rand.Rand) float64 { return float64(int64(math.Exp(r.Float64()*29))) / 1e6 }},
		{"constant", func(*rand.Rand) float64 { return 42.5 }},
		{"bimodal", func(r *rand.Rand) float64 {
			if r.IntN(100) < 3 {
				return 5000 + r.Float64()*100
			}
			return 20 + r.Float64()
		}},
	}
	ps := []float64{1, 5, 10, 25, 50, 75, 90, 95, 99}
	for _, d := range dists {
		t.Run(d.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var s series
			vals := make([]float64, n)
			for i := range vals {
				vals[i] = d.gen(rng)
				s.add(vals[i], limit)
			}
			got := s.stats()
			want := Compute(vals) // sorts vals
			pv := []float64{got.P1, got.P5, got.P10, got.P25, got.P50, got.P75, got.P90, got.P95, got.P99}
			for i, p := range ps {
				r := float64(n-1) * p / 100
				lo, hi := vals[int(math.Floor(r))], vals[int(math.Ceil(r))]
				within := func(x float64) bool { return math.Abs(pv[i]-x) <= SketchRelativeAccuracy*math.Abs(x)*(1+1e-9) }
				if !within(lo) && !within(hi) {
					t.Errorf("p%v = %v, want within %v of %v or %v", p, pv[i], SketchRelativeAccuracy, lo, hi)
				}
			}
			if got.Min != want.Min || got.Max != want.Max || got.Count != want.Count {
				t.Errorf("min/max/count %v/%v/%d, want %v/%v/%d", got.Min, got.Max, got.Count, want.Min, want.Max, want.Count)
			}
			close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !close(got.Sum, want.Sum) || !close(got.Avg, want.Avg) || !close(got.Std, want.Std) {
				t.Errorf("sum/avg/std %v/%v/%v, want %v/%v/%v", got.Sum, got.Avg, got.Std, want.Sum, want.Avg, want.Std)
			}
		})
	}
}

// streamRecord is a valid streamed request whose timings vary with i.
func streamRecord(i int) record.Request {
	const t0 = int64(1_800_000_000_000_000_000)
	sent := t0 + int64(i)*1e6
	ttft := int64(10e6 + (i*7919)%50e6)
	e2e := ttft + int64(3*(5e6+(i*104729)%5e6))
	return record.Request{
		RequestID: uint64(i), IntendedNS: sent - 1000, DispatchedNS: sent, SentNS: sent, WroteNS: sent + 1e5,
		HeadersNS: sent + ttft - 1e6, FirstEventNS: sent + ttft - 1e6,
		FirstTokenNS: sent + ttft, FirstOutputTokenNS: sent + ttft, SecondTokenNS: sent + ttft + 5e6,
		LastTokenNS: sent + e2e, EndNS: sent + e2e + 1e5,
		TTFTNS: ttft, TTFONS: ttft, TTSTNS: 5e6, ITLNS: float64(e2e-ttft) / 3, E2ENS: e2e,
		LatenessNS: 1000, LatencyFromIntendedNS: e2e + 1000,
		InputTokens: 100 + int32(i%300), OutputTokens: 4, MaxTokens: 4,
		ServerPromptTokens: 100 + int32(i%300), ServerCompletionTokens: 4, ServerReasoningTokens: -1,
		ServerCachedTokens: 0, ExpectedCachedTokens: 0, Reads: 4, MaxEventsRead: 1,
		StatusCode: 200, ConnReused: true,
	}
}

// TestAccumulatorBoundedMemory: past the exact limit, adding requests
// allocates nothing and the live heap stays flat.
func TestAccumulatorBoundedMemory(t *testing.T) {
	a := NewAccumulator(Options{Streaming: true})
	a.exact = 1000
	recs := make([]record.Request, 4096)
	for i := range recs {
		recs[i] = streamRecord(i)
	}
	for i := range 20_000 {
		a.Add(&recs[i%len(recs)])
	}
	i := 0
	if n := testing.AllocsPerRun(10_000, func() { a.Add(&recs[i%len(recs)]); i++ }); n != 0 {
		t.Errorf("Add past the exact limit: %v allocs per request, want 0", n)
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const more = 300_000
	for j := range more {
		r := streamRecord(j)
		a.Add(&r)
	}
	after := heap()
	// Kept exactly, 300k requests would be 300k × ~20 metrics × 8 bytes = 48 MB.
	if after > before && after-before > 1<<20 {
		t.Errorf("heap grew %d bytes over %d requests", after-before, more)
	}
	runtime.KeepAlive(a)
	st := a.Summary(RunInfo{}).Metrics["time_to_first_token"]
	if !st.Approximate || st.Count != 20_000+10_000+more+1 {
		t.Errorf("ttft %+v", st)
	}
}

// TestSummaryApproximateJSON: summary.json flags sketched metrics, and only
// them.
func TestSummaryApproximateJSON(t *testing.T) {
	a := NewAccumulator(Options{Streaming: true})
	a.exact = 100
	for i := range 150 {
		r := streamRecord(i)
		a.Add(&r)
	}
	b, err := a.Summary(RunInfo{}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var ttft struct {
		Approximate   *bool    `json:"approximate"`
		RelativeError *float64 `json:"relative_error"`
	}
	if err := json.Unmarshal(m["time_to_first_token"], &ttft); err != nil {
		t.Fatal(err)
	}
	if ttft.Approximate == nil || !*ttft.Approximate || ttft.RelativeError == nil || *ttft.RelativeError != SketchRelativeAccuracy {
		t.Errorf("time_to_first_token: %s", m["time_to_first_token"])
	}
	var buf bytes.Buffer
	if err := a.Summary(RunInfo{}).WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("approximate (within 0.5 % relative)")) {
		t.Errorf("table does not say the percentiles are approximate:\n%s", buf.Bytes())
	}
	exact, _ := testSummary(t).JSON()
	if bytes.Contains(exact, []byte("approximate")) || bytes.Contains(exact, []byte("relative_error")) {
		t.Error("an exact summary mentions approximation")
	}
}

// TestErrorEntriesCapped: distinct (kind, status) pairs beyond
// MaxErrorEntries are counted, not itemized.
func TestErrorEntriesCapped(t *testing.T) {
	a := NewAccumulator(Options{})
	const pairs = MaxErrorEntries + 50
	for i := range pairs {
		for range 2 {
			a.Add(&record.Request{SentNS: 1, ErrorKind: record.ErrHTTPStatus, StatusCode: int32(1000 + i), ErrorMessage: "x",
				ServerPromptTokens: -1, ServerCompletionTokens: -1, ServerCachedTokens: -1, ExpectedCachedTokens: -1})
		}
	}
	s := a.Summary(RunInfo{})
	if len(s.Errors) != MaxErrorEntries || s.ErrorsOmitted != 2*50 || s.ErrorsByKind[record.ErrHTTPStatus] != 2*pairs {
		t.Fatalf("%d entries, %d omitted, by kind %v", len(s.Errors), s.ErrorsOmitted, s.ErrorsByKind)
	}
	b, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"error_summary_omitted_count": {
    "unit": "requests",
    "avg": 100
  }`)) {
		t.Errorf("summary.json lacks the omitted count:\n%s", b)
	}
}
