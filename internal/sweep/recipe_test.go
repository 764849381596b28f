package sweep

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/mockserver"
	isearch "github.com/reprise-bench/reprise/internal/search"
	"github.com/reprise-bench/reprise/replay"
)

// recipeMock is the mock of the recipe tests, in closed loop
// (internal/mockserver's timing model, as capacityMock):
//
//	below S slots a request's TTFT is t0 = TTFT + P·ISL and its ITL
//	ITL(c) = ITL + R·(c − 1) with c requests running; a slot is held
//	T(c) = t0 + (OSL − 1)·ITL(c), so E2E(c) = T(c).
//	Past S every slot is busy: throughput X = S/T(S), E2E(c) = c/X =
//	c·T(S)/S (Little's law) and TTFT(c) = t0 + (c/S − 1)·T(S).
//
// With S = 8, t0 = 20 + 16 = 36 ms, ITL = 20 ms + 4 ms per running
// request and OSL = 6: T(8) = 36 + 5·48 = 276 ms, X = 29 requests/s.
var recipeMock = capacityMock{S: 8, TTFT: 20 * time.Millisecond, P: time.Millisecond,
	ITL: 20 * time.Millisecond, R: 4 * time.Millisecond, ISL: 16, OSL: 6}

func (m capacityMock) t0() float64 { return m.firstToken() }

func (m capacityMock) itlAt(c float64) float64 {
	return (m.ITL + time.Duration(min(c, float64(m.S))-1)*m.R).Seconds() * 1e3
}

func (m capacityMock) hold(c float64) float64 { return m.t0() + float64(m.OSL-1)*m.itlAt(c) }

func (m capacityMock) ttftAt(c float64) float64 {
	return m.t0() + max(c/float64(m.S)-1, 0)*m.hold(float64(m.S))
}

func (m capacityMock) e2eAt(c float64) float64 {
	if c <= float64(m.S) {
		return m.hold(c)
	}
	return c * m.hold(float64(m.S)) / float64(m.S)
}

// needCPU skips a calibration against the mock when this process gets
// less than a third of a CPU, unless $REPRISE_CALIBRATE_UNDER_LOAD is
// set: then it runs, to see what a loaded machine does to the answers
// (each must still be within 10 % or say that it cannot tell).
func needCPU(t *testing.T) {
	t.Helper()
	share := cpuShare()
	if os.Getenv("REPRISE_CALIBRATE_UNDER_LOAD") != "" {
		t.Logf("this process gets %.0f%% of a CPU; calibrating anyway ($REPRISE_CALIBRATE_UNDER_LOAD)", 100*share)
		return
	}
	if share < 0.33 {
		t.Skipf("this process gets %.0f%% of a CPU; the calibration needs a third of one (set REPRISE_CALIBRATE_UNDER_LOAD=1 to run it anyway)", 100*share)
	}
}

// mockLateness is the p90, in ms, of the mock's own lateness over the
// content events of its log: how long after the time its latency model
// scheduled a token it wrote it (timer wake-up and scheduling delay).
func mockLateness(log []mockserver.RequestLog) float64 {
	var late []float64
	for _, r := range log {
		for _, e := range r.Events {
			if e.Kind == mockserver.EventContent && e.DueNS > 0 {
				late = append(late, float64(e.TimeNS-e.DueNS)/1e6)
			}
		}
	}
	if len(late) == 0 {
		return 0
	}
	slices.Sort(late)
	return late[int(0.9*float64(len(late)-1))]
}

// mockITL is the mean, over the requests of the mock's log with at
// least two content events, of each one's mean gap between the writes of
// its tokens, in ms: the ITL the mock really served.
func mockITL(log []mockserver.RequestLog) float64 {
	sum, n := 0.0, 0
	for _, r := range log {
		var first, last int64
		k := 0
		for _, e := range r.Events {
			if e.Kind != mockserver.EventContent {
				continue
			}
			if k == 0 {
				first = e.TimeNS
			}
			last, k = e.TimeNS, k+1
		}
		if k >= 2 {
			sum, n = sum+float64(last-first)/1e6/float64(k-1), n+1
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// largest is the largest whole concurrency in [1, hi] at which f ≤ lim.
func largest(f func(float64) float64, lim, hi float64) float64 {
	best := 0.0
	for c := 1.0; c <= hi; c++ {
		if f(c) <= lim {
			best = c
		}
	}
	return best
}

// TestRecipesAgainstTheMock: every recipe's answer is within 10 % of the
// value derived from the mock's settings (recipeMock), with its probe
// count logged.
func TestRecipesAgainstTheMock(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's latency curve: the race detector slows the mock")
	}
	if testing.Short() {
		t.Skip("about 90 s of probes against the mock")
	}
	needCPU(t)
	m := recipeMock
	srv := m.startLogged(t)
	underLoad := os.Getenv("REPRISE_CALIBRATE_UNDER_LOAD") != ""
	const cmax = 32
	tests := []struct {
		name  string
		setup func(r *RecipeConfig, cfg *Config)
		// want is the derived answer; got reads it from the result.
		want float64
		got  func(r *SearchResult) float64
	}{
		{"max-throughput-itl-sla", func(r *RecipeConfig, _ *Config) { r.ITLSLA = 42 },
			largest(m.itlAt, 42, cmax), func(r *SearchResult) float64 { return r.Value }},
		{"max-throughput-ttft-sla", func(r *RecipeConfig, _ *Config) { r.TTFTSLA = m.t0() + 0.6*m.hold(8) },
			largest(m.ttftAt, m.t0()+0.6*m.hold(8), cmax), func(r *SearchResult) float64 { return r.Value }},
		{"max-concurrency-under-sla", func(r *RecipeConfig, _ *Config) { r.E2ESLA = 400; r.ErrorRateSLA = 0.01 },
			largest(m.e2eAt, 400, cmax), func(r *SearchResult) float64 { return r.Value }},
		// The mock's service is deterministic, so its slots run in waves:
		// all S start together and end together. Past S, c − S requests
		// of each wave wait for the next one, a whole hold T(S) = 276 ms,
		// and miss a TTFT SLO of 200 ms (t0 + T(S) > 200): the good
		// fraction is S/c, at least F up to c = S/F (8/0.9 → 8).
		{"max-goodput-under-slo", func(r *RecipeConfig, cfg *Config) {
			cfg.Base.Goodput = "ttft:200"
			r.SLOAttainment = 0.9
		}, math.Floor(float64(m.S) / 0.9), func(r *SearchResult) float64 { return r.Value }},
		{"concurrency-ramp", func(r *RecipeConfig, _ *Config) { r.Degradation = 1.92 },
			largest(m.e2eAt, 2.92*m.e2eAt(1), cmax), func(r *SearchResult) float64 { return r.Value }},
		// Prefill costs P = 1 ms per prompt token.
		{"prefill-ttft-curve", func(r *RecipeConfig, _ *Config) { r.ISLMin, r.ISLMax, r.ISLSteps = 16, 256, 4 },
			m.P.Seconds() * 1e3, func(r *SearchResult) float64 { return r.Slope }},
		// A ladder 1, 3, 8 at ISL 16, OSL 6: the front ends at c = S = 8,
		// whose output throughput is S·OSL/T(S) = 8·6/0.276 s ≈ 174 tokens/s.
		{"pareto-sweep", func(r *RecipeConfig, _ *Config) {
			r.Pairs, r.ConcurrencyMax, r.ConcurrencySteps = [][2]float64{{16, 6}}, 8, 3
		}, float64(m.S*m.OSL) / (m.hold(float64(m.S)) / 1e3), func(r *SearchResult) float64 {
			best := 0.0
			for _, name := range r.Pareto {
				for _, p := range r.Probes {
					if p.Point == name {
						best = max(best, p.Metrics["output_token_throughput"])
					}
				}
			}
			return best
		}},
		// At concurrency 1 every gap is ITL, whatever the output length.
		{"decode-itl-curve", func(r *RecipeConfig, _ *Config) { r.OSLMin, r.OSLMax, r.OSLSteps = 4, 16, 3 },
			m.itlAt(1), func(r *SearchResult) float64 { return r.Metrics["inter_token_latency.avg.mean"] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.ResetLog()
			cfg := NewConfig()
			cfg.Base = m.base(srv, 10)
			cfg.Base.Replay.Mode, cfg.Base.Replay.Arrival, cfg.Base.Replay.RequestRate = replay.ModeConcurrency, replay.DefaultArrival, 0
			cfg.Base.Replay.Concurrency = 1
			cfg.Base.Streaming = true
			cfg.Dir = t.TempDir()
			r := NewRecipeConfig(tt.name)
			r.Stat, r.ConcurrencyMax, r.MinRounds = "avg", cmax, 3
			tt.setup(r, &cfg)
			if r.Name == RecipeParetoSweep {
				cfg.Base.Synthetic.ISL, cfg.Base.Synthetic.OSL = 0, 0 // the pairs set them
			}
			cfg.Recipe = r
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			sr := res.Search
			for _, p := range sr.Probes {
				t.Logf("probe %s (%s): level %.3f pass %v valid %v held %.3f %v %v", p.Point, p.Why, p.Level, p.Pass, p.Valid, p.HeldShare, p.Reasons, p.Metrics)
			}
			t.Logf("%s; derived %.4g, %d probes", sr.Text, tt.want, len(sr.Probes))
			// The derived value is the truth only while the mock keeps its
			// latency model's schedule: its own log says how late its
			// writes were. A starved machine makes the mock late, and
			// then a right answer differs from the derived one.
			late := mockLateness(srv.Log())
			onModel := late <= 0.1*m.ITL.Seconds()*1e3
			got := tt.got(sr)
			rel := math.Abs(got-tt.want) / tt.want
			t.Logf("the mock's own lateness p90 %.3g ms (on its model: %v)", late, onModel)
			switch {
			case sr.CannotTell != "" && onModel && !underLoad:
				t.Errorf("cannot tell (%s) on a quiet machine, with the mock on its model", sr.CannotTell)
			case sr.CannotTell != "":
				t.Logf("cannot tell: %s", sr.CannotTell)
			case rel <= 0.10:
			case !onModel:
				t.Logf("answer %.4g, derived %.4g: off by %.1f%%, but the mock ran off its model, so the derived value is not what it did", got, tt.want, 100*rel)
			default:
				t.Errorf("answer %.4g, derived from the mock's settings %.4g: off by %.1f%% (> 10%%), the mock on its model", got, tt.want, 100*rel)
			}
			// What the mock did is in its log: for the decode curve, the
			// mean gap between its writes of each request's tokens,
			// which the answer must match on or off the mock's model.
			if tt.name == RecipeDecodeITL && sr.CannotTell == "" {
				did := mockITL(srv.Log())
				t.Logf("the mock's log: ITL %.4g ms", did)
				if d := math.Abs(got-did) / did; d > 0.10 {
					t.Errorf("answer %.4g, the mock's own log %.4g: off by %.1f%% (> 10%%)", got, did, 100*d)
				}
			}
			// sweep.json holds the answer and the probes.
			b, err := os.ReadFile(filepath.Join(cfg.Dir, ManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			var mf Manifest
			if err := json.Unmarshal(b, &mf); err != nil {
				t.Fatal(err)
			}
			if mf.Search == nil || len(mf.Search.Probes) != len(sr.Probes) || mf.SchemaVersion != SchemaVersion {
				t.Errorf("sweep.json: search %v, version %s", mf.Search != nil, mf.SchemaVersion)
			}
		})
	}
}

func TestExpandProfile(t *testing.T) {
	ax := func(name, spec string) Axis {
		a, err := ParseAxis(name, spec)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	names := func(e *Expansion) []string {
		var out []string
		for _, p := range e.Points {
			out = append(out, p.Name())
		}
		return out
	}
	e, err := ExpandProfile(ProfileSweep{Lists: []Axis{ax(Concurrency, "10,50"), ax(ISL, "128,512"), ax(OSL, "64,128")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"concurrency_10_isl_128_osl_64", "concurrency_10_isl_128_osl_128", "concurrency_10_isl_512_osl_64",
		"concurrency_10_isl_512_osl_128", "concurrency_50_isl_128_osl_64", "concurrency_50_isl_128_osl_128",
		"concurrency_50_isl_512_osl_64", "concurrency_50_isl_512_osl_128"}
	if d := cmp.Diff(want, names(e)); d != "" {
		t.Errorf("grid of three lists (-want +got):\n%s", d)
	}
	e, err = ExpandProfile(ProfileSweep{Lists: []Axis{ax(Concurrency, "10,50"), ax(ISL, "128,512")}, Type: SweepZip})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"concurrency_10_isl_128", "concurrency_50_isl_512"}, names(e)); d != "" {
		t.Errorf("zip (-want +got):\n%s", d)
	}
	if _, err := ExpandProfile(ProfileSweep{Lists: []Axis{ax(Concurrency, "10,50"), ax(ISL, "1,2,3")}, Type: SweepZip}); err == nil {
		t.Error("zip of lists of unequal length was taken")
	}
	e, err = ExpandProfile(ProfileSweep{Variants: []string{"small: concurrency=8, isl=512", "isl_stddev=10, --osl=64"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]Point{{Names: []string{Concurrency, ISL}, Values: []float64{8, 512}, Label: "small"},
		{Names: []string{ISLStdDev, OSL}, Values: []float64{10, 64}, Label: "variant_2"}}, e.Points); d != "" {
		t.Errorf("variants (-want +got):\n%s", d)
	}
	for _, bad := range []ProfileSweep{
		{Variants: []string{"concurrency=8"}},                                                 // one variant
		{Variants: []string{"a: concurrency=8", "a: concurrency=9"}},                          // a name twice
		{Variants: []string{"model=x", "concurrency=9"}},                                      // not a sweepable flag
		{Variants: []string{"concurrency=8", "concurrency=9"}, Lists: []Axis{ax(ISL, "1,2")}}, // two kinds
		{Sampling: isearch.MethodSobol, Samples: 4},                                           // no dimension
		{Sampling: "grid", Samples: 4, Dimensions: []string{"concurrency:1,64"}},
		{Sampling: isearch.MethodSobol, Samples: 4, Dimensions: []string{"model:1,64"}},
	} {
		if _, err := ExpandProfile(bad); err == nil {
			t.Errorf("ExpandProfile(%+v) took it", bad)
		} else {
			t.Log(err)
		}
	}
	e, err = ExpandProfile(ProfileSweep{Sampling: isearch.MethodSobol, Samples: 8, Seed: 42,
		Dimensions: []string{"concurrency:1,64", "request-rate:0.5,4:float"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Points) != 8 || e.Points[0].Name() != "sample_0001" || e.Design == nil || len(e.Design.Points) != 8 {
		t.Fatalf("sampled: %+v", e)
	}
	for _, p := range e.Points {
		if c := p.Values[0]; c != math.Trunc(c) || c < 1 || c > 64 {
			t.Errorf("concurrency %v of a sample is not a whole number in [1, 64]", c)
		}
	}
	again, _ := ExpandProfile(ProfileSweep{Sampling: isearch.MethodSobol, Samples: 8, Seed: 42,
		Dimensions: []string{"concurrency:1,64", "request-rate:0.5,4:float"}})
	if !cmp.Equal(e, again) {
		t.Error("the same seed gave another design")
	}
}

// TestSweepOfThreeSettingsResumes: a grid of three settings (more than
// reprise sweep took before) runs every point in its own directory,
// and running it again reads every point back instead of running it.
func TestSweepOfThreeSettingsResumes(t *testing.T) {
	m := mockModel
	srv := m.start(t)
	cfg := NewConfig()
	cfg.Base = m.base(srv, 4)
	cfg.Base.Replay.Mode, cfg.Base.Replay.Arrival, cfg.Base.Replay.RequestRate, cfg.Base.Replay.Concurrency = replay.ModeConcurrency, replay.DefaultArrival, 0, 1
	cfg.Stop = StopConfig{MaxErrorRate: 1}
	cfg.Dir = t.TempDir()
	for _, a := range [][2]string{{Concurrency, "1,2"}, {ISL, "8,16"}, {OSL, "2,3"}} {
		ax, err := ParseAxis(a[0], a[1])
		if err != nil {
			t.Fatal(err)
		}
		cfg.Axes = append(cfg.Axes, ax)
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 8 {
		t.Fatalf("%d rows, want 8", len(res.Rows))
	}
	first, _ := os.ReadFile(filepath.Join(cfg.Dir, ManifestFile))
	srv.Close() // a resumed sweep needs no server: every point is read back
	res2, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(cfg.Dir, ManifestFile))
	if len(res2.Rows) != 8 || string(first) != string(again) {
		t.Errorf("resumed sweep differs: %d rows", len(res2.Rows))
	}
}

// TestMonotoneSearchAgainstTheMock: a model-based search of one load
// setting under upper-limit SLAs (--search-space concurrency:1,32:int
// --search-metric output_token_throughput --search-sla
// request_latency:avg:<=:400) is the monotone search: its answer is
// within 10 % of the largest concurrency whose request latency the
// mock's settings put under 400 ms (recipeMock's E2E(c)), its probes
// are the boundary loop's (the range's ends first), and sweep.json
// carries its violations field.
func TestMonotoneSearchAgainstTheMock(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's latency curve: the race detector slows the mock")
	}
	if testing.Short() {
		t.Skip("about 30 s of probes against the mock")
	}
	needCPU(t)
	cfg := monotoneConfig(t)
	sla, err := isearch.ParseConstraint("request_latency:avg:<=:400")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Search = &SearchConfig{Space: []isearch.Dimension{{Name: Concurrency, Lo: 1, Hi: 32, Kind: isearch.KindInt}},
		Objectives:  []isearch.Objective{{Metric: "output_token_throughput:avg", Maximize: true}},
		Constraints: []isearch.Constraint{sla}, MaxIterations: 20, InitialPoints: 4, Seed: 1}
	if !cfg.Search.monotone() {
		t.Fatal("a single-load SLA problem is not taken as monotone")
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Search
	for _, p := range sr.Probes {
		t.Logf("probe %s (%s): pass %v valid %v e2e %.1f ms", p.Point, p.Why, p.Pass, p.Valid, p.Metrics["request_latency.avg"])
	}
	want := largest(recipeMock.e2eAt, 400, 32)
	t.Logf("%s; derived %.4g, %d probes", sr.Text, want, len(sr.Probes))
	if rel := math.Abs(sr.Value-want) / want; rel > 0.10 {
		t.Errorf("answer %v, derived from the mock's settings %v: off by %.1f%% (> 10%%)", sr.Value, want, 100*rel)
	}
	if len(sr.Probes) < 2 || sr.Probes[0].Settings[Concurrency] != 1 || sr.Probes[1].Settings[Concurrency] != 32 || sr.Probes[0].Why != "end" {
		t.Errorf("the monotone search starts at the range's ends; probes %+v", sr.Probes[:min(2, len(sr.Probes))])
	}
	b, err := os.ReadFile(filepath.Join(cfg.Dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var mf Manifest
	if err := json.Unmarshal(b, &mf); err != nil {
		t.Fatal(err)
	}
	if mf.Search == nil || !cmp.Equal(mf.Search.Violations, sr.Violations) || mf.Search.Value != sr.Value {
		t.Errorf("sweep.json's search %+v differs from the result's", mf.Search)
	}
}

// TestSearchConfigMonotone: only one load setting, one metric to
// maximize and upper limits make a monotone problem.
func TestSearchConfigMonotone(t *testing.T) {
	le := isearch.Constraint{Metric: "time_to_first_token:p99", Op: "<=", Threshold: 500}
	ge := isearch.Constraint{Metric: "output_token_throughput:avg", Op: ">=", Threshold: 10}
	dim := func(n string) []isearch.Dimension {
		return []isearch.Dimension{{Name: n, Lo: 1, Hi: 64, Kind: isearch.KindInt}}
	}
	max1 := []isearch.Objective{{Metric: "output_token_throughput:avg", Maximize: true}}
	for _, tt := range []struct {
		c    SearchConfig
		want bool
	}{
		{SearchConfig{Space: dim(Concurrency), Objectives: max1, Constraints: []isearch.Constraint{le}}, true},
		{SearchConfig{Space: dim(RequestRate), Objectives: max1, Constraints: []isearch.Constraint{le}}, true},
		{SearchConfig{Space: dim(ISL), Objectives: max1, Constraints: []isearch.Constraint{le}}, false},
		{SearchConfig{Space: append(dim(Concurrency), dim(ISL)...), Objectives: max1, Constraints: []isearch.Constraint{le}}, false},
		{SearchConfig{Space: dim(Concurrency), Objectives: max1}, false},
		{SearchConfig{Space: dim(Concurrency), Objectives: max1, Constraints: []isearch.Constraint{le, ge}}, false},
		{SearchConfig{Space: dim(Concurrency), Objectives: []isearch.Objective{{Metric: "request_latency:avg"}}, Constraints: []isearch.Constraint{le}}, false},
	} {
		if got := tt.c.monotone(); got != tt.want {
			t.Errorf("%+v: monotone %v, want %v", tt.c, got, tt.want)
		}
	}
}

// TestSearchProbeFillsItsConcurrency: a search probe at concurrency c
// given a --request-count below 3·c sends 3·c measured requests after c
// warmup ones (probeLength), and the mock's log shows c requests in the
// server at once: with the base's 4 it never had more than 4.
func TestSearchProbeFillsItsConcurrency(t *testing.T) {
	m := recipeMock
	c := mockserver.NewConfig()
	c.Addr, c.MaxNumSeqs, c.TTFT, c.PrefillPerToken, c.ITL, c.ITLPerRunning = "127.0.0.1:0", m.S, m.TTFT, m.P, m.ITL, m.R
	c.PrefixCacheTokens = 0
	srv, err := mockserver.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg := NewConfig()
	cfg.Base = m.base(srv, 4)
	cfg.Base.Replay.Mode, cfg.Base.Replay.Arrival, cfg.Base.Replay.RequestRate = replay.ModeConcurrency, replay.DefaultArrival, 0
	cfg.Base.Replay.Concurrency = 1
	cfg.Base.Streaming = true
	cfg.Dir = t.TempDir()
	cfg.Search = &SearchConfig{Space: []isearch.Dimension{{Name: Concurrency, Lo: 6, Hi: 12, Kind: isearch.KindInt}},
		Objectives: []isearch.Objective{{Metric: "output_token_throughput:avg", Maximize: true}}, MaxIterations: 2, InitialPoints: 2, Seed: 1}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	logs := srv.Log()
	want, top := 0, 0
	for _, p := range res.Search.Probes {
		cc := int(p.Settings[Concurrency])
		want, top = want+DefaultProbeRounds*cc+cc, max(top, cc)
	}
	if len(logs) != want {
		t.Errorf("the mock served %d requests; want %d (c warmup and %d·c measured per probe)", len(logs), want, DefaultProbeRounds)
	}
	// The most requests in the server at once, from the log's times.
	most := 0
	for _, a := range logs {
		n := 0
		for _, b := range logs {
			if b.ReceivedNS <= a.ReceivedNS && b.EndNS > a.ReceivedNS {
				n++
			}
		}
		most = max(most, n)
	}
	if most != top {
		t.Errorf("at most %d requests were in the mock at once; the top probe asked for %d", most, top)
	}
}

// TestBoundaryTextCannotTell: a boundary recipe whose lowest load could
// not be measured says it cannot tell (not "max concurrency 0 … every
// concurrency up to 4 met it"), and sweep.json's search says the same;
// one that stopped at an unmeasurable load above its answer says the
// answer holds only below it.
func TestBoundaryTextCannotTell(t *testing.T) {
	late := Validity{Reasons: []string{"schedule lateness p99 80 ms over the budget 15 ms"}}
	probe := func(c float64, valid, pass bool) SearchProbe {
		p := SearchProbe{Point: "concurrency_" + formatValue(c), Settings: map[string]float64{Concurrency: c}, Pass: pass}
		if valid {
			p.Validity = Validity{Valid: true}
		} else {
			p.Validity = late
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		b      isearch.Boundary
		probes []SearchProbe
		want   []string // in the text
		not    []string
	}{
		{"lowest unmeasurable", isearch.Boundary{Unmeasurable: 1},
			[]SearchProbe{probe(1, false, false), probe(1, false, false), probe(1, false, false)},
			[]string{"cannot tell: no tested load met the SLAs under request_latency.avg ≤ 400",
				"concurrency 1 could not be measured on this machine", "in 3 tries", "schedule lateness p99 80 ms"},
			[]string{"max concurrency 0", "every concurrency up to"}},
		{"top unmeasurable", isearch.Boundary{Value: 2, Unmeasurable: 4},
			[]SearchProbe{probe(1, true, true), probe(4, false, false), probe(4, false, false), probe(4, false, false)},
			[]string{"max concurrency 2 under", "cannot tell above it: concurrency 4 could not be measured"},
			[]string{"every concurrency up to"}},
		{"lowest failed", isearch.Boundary{Above: 1},
			[]SearchProbe{probe(1, true, false)},
			[]string{"no tested load met the SLAs under request_latency.avg ≤ 400: concurrency 1, the lowest, failed"},
			[]string{"cannot tell", "max concurrency 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sweeper{cfg: NewConfig()}
			r := NewRecipeConfig(RecipeMaxConcurrency)
			r.Stat, r.E2ESLA, r.ConcurrencyMax = "avg", 400, 4
			b := tc.b
			b.Probes = make([]isearch.BoundaryProbe, len(tc.probes))
			res := &SearchResult{Kind: r.Name, Setting: Concurrency, Value: b.Value, Above: b.Above, Converged: true, Probes: tc.probes}
			res.Text = s.boundaryText(r, res, &b)
			t.Log(res.Text)
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("the answer does not say %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(res.Text, w) {
					t.Errorf("the answer says %q", w)
				}
			}
			js, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back SearchResult
			if err := json.Unmarshal(js, &back); err != nil {
				t.Fatal(err)
			}
			if unmeasurable := tc.b.Unmeasurable > 0; unmeasurable != (back.CannotTell != "") || back.Unmeasurable != tc.b.Unmeasurable ||
				(unmeasurable && back.Converged) || back.Text != res.Text {
				t.Errorf("sweep.json's search: cannot_tell %q, unmeasurable %v, converged %v", back.CannotTell, back.Unmeasurable, back.Converged)
			}
		})
	}
}

// monotoneConfig is a closed-loop streaming sweep against recipeMock for
// the monotone searches over concurrency 1…32: three rounds of the
// range's top concurrency (with fewer requests than slots a probe at 32
// never has 32 in flight).
func monotoneConfig(t *testing.T) Config {
	t.Helper()
	m := recipeMock
	srv := m.start(t)
	cfg := NewConfig()
	cfg.Base = m.base(srv, 3*32)
	cfg.Base.Replay.Mode, cfg.Base.Replay.Arrival, cfg.Base.Replay.RequestRate = replay.ModeConcurrency, replay.DefaultArrival, 0
	cfg.Base.Replay.Concurrency = 1
	cfg.Base.Streaming = true
	cfg.Dir = t.TempDir()
	return cfg
}
