package synth

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

func genConfig(mod func(c *GenerateConfig)) GenerateConfig {
	c := NewGenerateConfig()
	c.Rate = 5
	c.Sessions = 200
	mod(&c)
	return c
}

func mustGenerate(t testing.TB, c GenerateConfig) *Result {
	t.Helper()
	res, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// randomShape draws c's block size, format and, two times in three, a
// prefix tree, for the random-configuration oracle tests.
func randomShape(r *rng, c *GenerateConfig) {
	pick := func(xs ...int) int { return xs[r.intN(len(xs))] }
	c.BlockSize = pick(16, 64, 512)
	if r.intN(2) == 0 {
		c.Format = trace.FormatBailian
	}
	if r.intN(3) > 0 {
		c.PrefixRoots = 1 + r.intN(5)
		c.PrefixDepth = 1 + r.intN(3)
		if c.PrefixDepth > 1 {
			c.PrefixFanout = []int{1 + r.intN(4)}
		}
		c.PrefixTokens = []int{1 + r.intN(2000)}
		c.PrefixShare = r.float64()
	}
}

// TestGenerateModelMatchesAnalyzer is the oracle test of the exact model:
// over random configurations, the statistics the solver relies on equal
// analyze-trace's on the written file, the file reads back to the same
// rows, and the ids are chained.
func TestGenerateModelMatchesAnalyzer(t *testing.T) {
	r := newRNG(99, 1)
	for i := range 30 {
		c := NewGenerateConfig()
		c.Seed = uint64(i)
		c.Rate = 0.5 + 20*r.float64()
		c.Sessions = 10 + r.intN(150)
		randomShape(r, &c)
		if r.intN(2) == 0 {
			c.Turns = 1 + 3*r.float64()
			c.TurnsStddev = r.float64() * 2
			c.ThinkTime = time.Duration(r.intN(10_000)) * time.Millisecond
		}
		c.ISL = Dist{Kind: []DistKind{DistFixed, DistNormal, DistLognormal}[r.intN(3)], Mean: float64(1 + r.intN(3000))}
		if c.ISL.Kind != DistFixed {
			c.ISL.Stddev = c.ISL.Mean * r.float64()
		}
		c.OSL = Dist{Kind: DistLognormal, Mean: float64(1 + r.intN(500)), Stddev: 50}
		if r.intN(3) == 0 {
			c.MaxISL = 2000 + r.intN(8000)
		}
		if r.intN(4) == 0 {
			c.TargetHitRatio = 0.3 + 0.5*r.float64()
			c.PrefixShare = 1
		}
		name := fmt.Sprintf("%d", i)
		t.Run(name, func(t *testing.T) {
			res, err := Generate(c)
			if err != nil {
				if c.TargetHitRatio > 0 && strings.Contains(err.Error(), "--target-hit-ratio") {
					t.Skipf("target %v unreachable here: %v", c.TargetHitRatio, err)
				}
				if c.MaxISL > 0 && strings.Contains(err.Error(), "--max-isl") {
					t.Skip(err)
				}
				t.Fatalf("%+v: %v", c, err)
			}
			data := encode(t, res)
			rep := analyzeBytes(t, data, res.BlockSize, []int64{})
			crep := contextsReport(t, data, res, []int64{})
			st := res.Generate
			if rep.Rows != int64(st.Rows) || crep.Cache.TokenHitRatio != st.HitRatio ||
				crep.Cache.DistinctBlocks*int64(res.BlockSize) != st.WorkingSetTokens {
				t.Errorf("analyze-trace: rows %d hit %v ws %d; Generate: rows %d hit %v ws %d",
					rep.Rows, crep.Cache.TokenHitRatio, crep.Cache.DistinctBlocks*int64(res.BlockSize), st.Rows, st.HitRatio, st.WorkingSetTokens)
			}
			if rep.Source.Sorted {
				t.Error("the written file is not in time order")
			}
			back := readBack(t, data, res.Format, res.BlockSize)
			if !reflect.DeepEqual(res.Rows, back) {
				d := gocmp.Diff(res.Rows, back, cmpopts.EquateEmpty())
				t.Errorf("read back differs:\n%s", d[:min(len(d), 3000)])
			}
			checkChained(t, res.Rows)
		})
	}
}

// TestGenerateTargets: the hit-ratio and working-set targets are met, as
// analyze-trace measures them on the written file.
func TestGenerateTargets(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *GenerateConfig)
	}{
		{"hit 0.3, prefix sized", func(c *GenerateConfig) { c.Requests = 1000; c.Sessions = 0; c.TargetHitRatio = 0.3 }},
		{"hit 0.6, tree given", func(c *GenerateConfig) {
			c.TargetHitRatio = 0.6
			c.PrefixRoots, c.PrefixDepth, c.PrefixFanout, c.PrefixTokens = 10, 2, []int{3}, []int{3000, 1000}
		}},
		{"hit 0.85, sessions", func(c *GenerateConfig) {
			c.TargetHitRatio = 0.85
			c.Turns, c.ThinkTime = 4, 30*time.Second
		}},
		{"hit 0.5, bailian", func(c *GenerateConfig) { c.TargetHitRatio = 0.5; c.Format = trace.FormatBailian }},
		{"working set 5M", func(c *GenerateConfig) {
			c.Sessions, c.WorkingSet = 0, 5_000_000
			c.Turns, c.ThinkTime, c.ISL = 3, 10*time.Second, Dist{Kind: DistLognormal, Mean: 2000, Stddev: 1500}
		}},
		{"working set 3M, hit 0.6, 50 tenants", func(c *GenerateConfig) {
			c.Sessions, c.WorkingSet, c.TargetHitRatio, c.PrefixRoots = 0, 3_000_000, 0.6, 50
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := genConfig(tt.mod)
			res := mustGenerate(t, c)
			rep := contextsReport(t, encode(t, res), res, []int64{})
			hit := rep.Cache.TokenHitRatio
			ws := rep.Cache.DistinctBlocks * int64(rep.Cache.BlockSize)
			t.Logf("rows %d, hit %.4f, working set %d, prefix %v share %.3f", rep.Rows, hit, ws, res.Generate.PrefixTokens, res.Generate.PrefixShare)
			if c.TargetHitRatio > 0 && math.Abs(hit-c.TargetHitRatio) > 0.02 {
				t.Errorf("hit ratio %.4f, target %.2f ± 0.02", hit, c.TargetHitRatio)
			}
			if c.WorkingSet > 0 {
				if dev := math.Abs(float64(ws-c.WorkingSet)) / float64(c.WorkingSet); dev > 0.05 {
					t.Errorf("working set %d, target %d ± 5 %%", ws, c.WorkingSet)
				}
			}
		})
	}
}

func TestGenerateUnreachable(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *GenerateConfig)
		want []string
	}{
		{"history alone is above the target", func(c *GenerateConfig) {
			c.TargetHitRatio, c.Turns = 0.2, 10
		}, []string{"below", "own history"}},
		{"given prefix too short", func(c *GenerateConfig) {
			c.TargetHitRatio, c.PrefixRoots, c.PrefixTokens, c.ISL = 0.9, 1, []int{100}, Fixed(2000)
		}, []string{"out of reach", "longer --prefix-tokens"}},
		{"every session its own tree", func(c *GenerateConfig) {
			c.Sessions, c.TargetHitRatio, c.PrefixRoots = 5, 0.95, 1000
		}, []string{"out of reach"}},
		{"one session is more than the working set", func(c *GenerateConfig) {
			c.Sessions, c.WorkingSet, c.ISL = 0, 1000, Fixed(5000)
		}, []string{"--working-set 1000", "one session adds too much"}},
		{"everything over max ISL", func(c *GenerateConfig) {
			c.MaxISL, c.ISL = 100, Fixed(500)
		}, []string{"--max-isl 100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(genConfig(tt.mod))
			wantErr(t, err, tt.want...)
		})
	}
}

func TestGenerateDeterministic(t *testing.T) {
	c := genConfig(func(c *GenerateConfig) {
		c.Turns, c.TurnsStddev, c.ThinkTime, c.ThinkTimeStddev = 3, 1, 5*time.Second, 2*time.Second
		c.PrefixRoots, c.PrefixDepth, c.PrefixFanout, c.PrefixTokens = 3, 2, []int{3}, []int{700, 300}
		c.ISL = Dist{Kind: DistLognormal, Mean: 800, Stddev: 400}
		c.Arrival, c.Smoothness = ArrivalGamma, 0.5
		c.TargetHitRatio = 0.5
	})
	a, b := encode(t, mustGenerate(t, c)), encode(t, mustGenerate(t, c))
	if !bytes.Equal(a, b) {
		t.Fatal("same config and seed, different bytes")
	}
	c.Seed++
	if bytes.Equal(a, encode(t, mustGenerate(t, c))) {
		t.Error("seeds differ, bytes do not")
	}

	// More sessions keep the earlier ones as they were (times, turns,
	// lengths, paths): per-concern streams in session order.
	type turn struct {
		Session            string
		Turn               int
		Offset, Delay      time.Duration
		Input, Output, IDs int
	}
	sessionsOf := func(n int) map[string][]turn {
		c := c
		c.TargetHitRatio, c.PrefixShare = 0, 0.5
		c.Sessions = n
		m := map[string][]turn{}
		for _, r := range mustGenerate(t, c).Rows {
			m[r.SessionID] = append(m[r.SessionID], turn{r.SessionID, r.Turn, r.Offset, r.Delay, r.InputTokens, r.OutputTokens, len(r.HashIDs)})
		}
		return m
	}
	small, big := sessionsOf(50), sessionsOf(100)
	for id, turns := range small {
		if d := gocmp.Diff(turns, big[id]); d != "" {
			t.Fatalf("session %s changed with more sessions:\n%s", id, d)
		}
	}
}

func TestGenerateGolden(t *testing.T) {
	for _, f := range []trace.Format{trace.FormatMooncake, trace.FormatBailian} {
		t.Run(string(f), func(t *testing.T) {
			c := NewGenerateConfig()
			c.Format, c.BlockSize, c.Rate, c.Sessions = f, 16, 1, 4
			c.Turns, c.ThinkTime = 3, 2*time.Second
			c.PrefixRoots, c.PrefixDepth, c.PrefixFanout, c.PrefixTokens = 2, 2, []int{2}, []int{20, 10}
			c.ISL = Dist{Kind: DistNormal, Mean: 30, Stddev: 10}
			c.OSL = Fixed(8)
			got := encode(t, mustGenerate(t, c))
			path := filepath.Join("testdata", strings.ReplaceAll(t.Name(), "/", "_")+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
			}
			if d := gocmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("output differs from %s (-want +got):\n%s", path, d)
			}
		})
	}
}

func offsetsOf(rows []trace.Row) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r.Offset.Seconds())
	}
	return out
}

func gapCV(ts []float64) (mean, cv float64) {
	var sum, ss float64
	n := float64(len(ts) - 1)
	for i := 1; i < len(ts); i++ {
		sum += ts[i] - ts[i-1]
	}
	mean = sum / n
	for i := 1; i < len(ts); i++ {
		d := ts[i] - ts[i-1] - mean
		ss += d * d
	}
	return mean, math.Sqrt(ss/n) / mean
}

func countIn(ts []float64, a, b float64) int {
	n := 0
	for _, t := range ts {
		if t >= a && t < b {
			n++
		}
	}
	return n
}

func TestGenerateArrivals(t *testing.T) {
	t.Run("constant", func(t *testing.T) {
		rows := mustGenerate(t, genConfig(func(c *GenerateConfig) { c.Rate, c.Arrival, c.Sessions = 4, ArrivalConstant, 50 })).Rows
		for i, r := range rows {
			if r.Offset != time.Duration(i)*250*time.Millisecond {
				t.Fatalf("row %d at %v, want %v", i, r.Offset, time.Duration(i)*250*time.Millisecond)
			}
		}
	})
	for _, tt := range []struct {
		name   string
		arr    Arrival
		shape  float64
		wantCV float64
	}{
		{"poisson", ArrivalPoisson, 1, 1},
		{"gamma bursty", ArrivalGamma, 0.25, 2},
		{"gamma smooth", ArrivalGamma, 4, 0.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := mustGenerate(t, genConfig(func(c *GenerateConfig) {
				c.Rate, c.Arrival, c.Smoothness, c.Sessions = 10, tt.arr, tt.shape, 20000
			})).Rows
			mean, cv := gapCV(offsetsOf(rows))
			if math.Abs(mean-0.1) > 0.004 || math.Abs(cv-tt.wantCV) > 0.06*tt.wantCV {
				t.Errorf("gap mean %.4f s (want 0.1), CV %.3f (want %.2f)", mean, cv, tt.wantCV)
			}
		})
	}
	t.Run("ramp to an end rate", func(t *testing.T) {
		// λ = 10 + 0.02·t over 1000 s: Λ(500) = 7500, Λ(1000) = 20000.
		ts := offsetsOf(mustGenerate(t, genConfig(func(c *GenerateConfig) {
			c.Sessions, c.Duration, c.Rate, c.RateEnd = 0, 1000*time.Second, 10, 30
		})).Rows)
		if n := len(ts); math.Abs(float64(n)-20000) > 600 {
			t.Errorf("%d sessions, want about 20000", n)
		}
		if n := countIn(ts, 0, 500); math.Abs(float64(n)-7500) > 300 {
			t.Errorf("%d sessions in the first half, want about 7500", n)
		}
		if ts[len(ts)-1] >= 1000 {
			t.Errorf("a session starts at %v s, after --duration", ts[len(ts)-1])
		}
	})
	t.Run("ramp up from 0", func(t *testing.T) {
		// Λ(t) = R·t²/(2·D) during the ramp: constant arrivals at
		// Λ = 0, 1, 2 land at t = sqrt(2·D·u/R).
		rows := mustGenerate(t, genConfig(func(c *GenerateConfig) {
			c.Sessions, c.Rate, c.RateRamp, c.Arrival = 3, 2, 100*time.Second, ArrivalConstant
		})).Rows
		for u, r := range rows {
			want := math.Sqrt(2 * 100 * float64(u) / 2)
			if math.Abs(r.Offset.Seconds()-want) > 1e-6 {
				t.Errorf("arrival %d at %v s, want %.6f", u, r.Offset.Seconds(), want)
			}
		}
	})
	t.Run("diurnal", func(t *testing.T) {
		// λ = 10·(1 − 0.9·cos(2πt/1000)): Λ(250) = 10·(250 − 900/(2π)).
		ts := offsetsOf(mustGenerate(t, genConfig(func(c *GenerateConfig) {
			c.Sessions, c.Duration, c.Rate, c.DiurnalPeriod, c.DiurnalAmplitude = 0, 1000*time.Second, 10, 1000*time.Second, 0.9
		})).Rows)
		night := 10 * (250 - 900/(2*math.Pi))
		day := 10 * (250 + 900/(2*math.Pi))
		if n := countIn(ts, 0, 250); math.Abs(float64(n)-night) > 0.08*night {
			t.Errorf("%d sessions in the first quarter, want about %.0f", n, night)
		}
		if n := countIn(ts, 250, 500); math.Abs(float64(n)-day) > 0.05*day {
			t.Errorf("%d sessions in the second quarter, want about %.0f", n, day)
		}
	})
}

func TestGenerateSessions(t *testing.T) {
	for _, f := range []trace.Format{trace.FormatMooncake, trace.FormatBailian} {
		t.Run(string(f), func(t *testing.T) {
			res := mustGenerate(t, genConfig(func(c *GenerateConfig) {
				c.Format, c.BlockSize, c.Sessions = f, 16, 30
				c.Turns, c.ThinkTime = 4, 3*time.Second
				c.ISL, c.OSL = Fixed(100), Fixed(50)
			}))
			type state struct {
				row trace.Row
				at  time.Duration
				pos int64
			}
			last := map[string]state{}
			rows := res.Rows
			if f == trace.FormatMooncake {
				// AIPerf's dialect: a later turn holds its 100 new tokens
				// only; the context it is sent with is checked below.
				for i, r := range rows {
					if r.Cumulative || r.InputTokens != 100 || len(r.HashIDs) != 7 {
						t.Fatalf("row %d: %d input tokens, %d ids, cumulative %v; want 100 new tokens in 7 fresh blocks", i, r.InputTokens, len(r.HashIDs), r.Cumulative)
					}
				}
				rows = Contexts(rows)
			}
			for i, r := range rows {
				if r.SessionID == "" {
					t.Fatal("a multi-turn row without a session id")
				}
				p, ok := last[r.SessionID]
				if r.Turn == 0 {
					if ok || r.InputTokens != 100 || !r.HasOffset {
						t.Fatalf("row %d: first turn %+v", i, r)
					}
				} else {
					if !ok || p.row.Turn != r.Turn-1 {
						t.Fatalf("row %d: turn %d after %+v", i, r.Turn, p.row)
					}
					if want := p.row.InputTokens + 50 + 100; r.InputTokens != want {
						t.Errorf("row %d: %d input tokens, want %d (previous + output + new)", i, r.InputTokens, want)
					}
					keep := p.row.InputTokens / 16
					if !slices.Equal(r.HashIDs[:keep], p.row.HashIDs[:keep]) || slices.Contains(p.row.HashIDs, r.HashIDs[keep]) {
						t.Errorf("row %d does not extend the %d full blocks of the turn before", i, keep)
					}
					if !r.HasDelay || r.Delay != 3*time.Second {
						t.Errorf("row %d: delay %v (set %v), want 3s", i, r.Delay, r.HasDelay)
					}
					if f == trace.FormatMooncake && r.HasOffset {
						t.Errorf("row %d: a later Mooncake turn carries a timestamp", i)
					}
					if f == trace.FormatBailian && (r.Offset != p.at+3*time.Second || r.ParentID != p.pos) {
						t.Errorf("row %d: at %v parent %d, want %v and %d", i, r.Offset, r.ParentID, p.at+3*time.Second, p.pos)
					}
				}
				at := r.Offset
				if !r.HasOffset {
					at = p.at + r.Delay
				}
				last[r.SessionID] = state{r, at, int64(i)}
			}
			if len(last) != 30 || len(res.Rows) != 120 {
				t.Errorf("%d sessions, %d rows", len(last), len(res.Rows))
			}
		})
	}
}

func TestGenerateRequestsAndMaxISL(t *testing.T) {
	res := mustGenerate(t, genConfig(func(c *GenerateConfig) {
		c.Sessions, c.Requests, c.Turns, c.ISL, c.OSL = 0, 50, 4, Fixed(1000), Fixed(100)
	}))
	if len(res.Rows) != 50 || res.Generate.Sessions != 13 {
		t.Errorf("--requests 50 with 4 turns: %d rows in %d sessions, want 50 in 13", len(res.Rows), res.Generate.Sessions)
	}
	// Turn lengths 1000, 2100, 3200, 4300: --max-isl 3500 keeps three.
	res = mustGenerate(t, genConfig(func(c *GenerateConfig) {
		c.Sessions, c.Turns, c.ISL, c.OSL, c.MaxISL = 10, 4, Fixed(1000), Fixed(100), 3500
	}))
	if st := res.Generate; len(res.Rows) != 30 || st.SessionsCut != 10 || st.RowsCut != 10 {
		t.Errorf("rows %d, cut %d sessions and %d rows", len(res.Rows), st.SessionsCut, st.RowsCut)
	}
}

func TestGenerateLengthsFromTrace(t *testing.T) {
	pairs, err := LoadLengths(testfiles.Trace(t, "mooncake/synthetic_trace.jsonl"), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := map[[2]int]bool{}
	isl := make([]int, 0, len(pairs))
	for _, p := range pairs {
		set[p] = true
		isl = append(isl, p[0])
	}
	res := mustGenerate(t, genConfig(func(c *GenerateConfig) { c.Lengths = pairs }))
	for _, r := range res.Rows {
		if !set[[2]int{r.InputTokens, r.OutputTokens}] {
			t.Fatalf("(%d, %d) is not a pair of the trace", r.InputTokens, r.OutputTokens)
		}
	}
	res = mustGenerate(t, genConfig(func(c *GenerateConfig) { c.ISL = Dist{Kind: DistEmpirical, Values: isl} }))
	for _, r := range res.Rows {
		if !slices.Contains(isl, r.InputTokens) || r.OutputTokens != DefaultOSL {
			t.Fatalf("(%d, %d): input not from the trace, or output not the default", r.InputTokens, r.OutputTokens)
		}
	}
}

func TestGenerateConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *GenerateConfig)
		want []string
	}{
		{"no count", func(c *GenerateConfig) { c.Sessions = 0 }, []string{"give one of --requests"}},
		{"two counts", func(c *GenerateConfig) { c.Requests = 5 }, []string{"exclusive"}},
		{"no rate", func(c *GenerateConfig) { c.Rate = 0 }, []string{"--rate 0"}},
		{"smoothness without gamma", func(c *GenerateConfig) { c.Smoothness = 0.5 }, []string{"only to --arrival gamma"}},
		{"bad arrival", func(c *GenerateConfig) { c.Arrival = "bursty" }, []string{`--arrival "bursty"`}},
		{"rate end without duration", func(c *GenerateConfig) { c.RateEnd = 3 }, []string{"give --duration"}},
		{"diurnal half given", func(c *GenerateConfig) { c.DiurnalAmplitude = 0.5 }, []string{"go together"}},
		{"amplitude over 1", func(c *GenerateConfig) { c.DiurnalAmplitude, c.DiurnalPeriod = 1.5, time.Hour }, []string{"--diurnal-amplitude 1.5"}},
		{"think time without turns", func(c *GenerateConfig) { c.ThinkTime = time.Second }, []string{"--turns above 1"}},
		{"tree flags without roots", func(c *GenerateConfig) { c.PrefixTokens = []int{100} }, []string{"give --prefix-roots"}},
		{"roots without tokens", func(c *GenerateConfig) { c.PrefixRoots = 3 }, []string{"--prefix-tokens: give"}},
		{"fanout list length", func(c *GenerateConfig) {
			c.PrefixRoots, c.PrefixDepth, c.PrefixFanout, c.PrefixTokens = 1, 3, []int{2, 2, 2}, []int{10}
		}, []string{"want one value or 2"}},
		{"huge tree", func(c *GenerateConfig) {
			c.PrefixRoots, c.PrefixDepth, c.PrefixFanout, c.PrefixTokens = 1000, 4, []int{1000}, []int{10}
		}, []string{"prefix trees of"}},
		{"share and target", func(c *GenerateConfig) { c.PrefixRoots, c.PrefixShare, c.TargetHitRatio = 1, 0.5, 0.5 }, []string{"what --target-hit-ratio adjusts"}},
		{"target of 1", func(c *GenerateConfig) { c.TargetHitRatio = 1 }, []string{"strictly between 0 and 1"}},
		{"fixed with stddev", func(c *GenerateConfig) { c.ISL = Dist{Kind: DistFixed, Mean: 10, Stddev: 2} }, []string{"--isl: a fixed distribution"}},
		{"isl mean 0", func(c *GenerateConfig) { c.ISL = Dist{Mean: 0} }, []string{"--isl: mean 0"}},
		{"format", func(c *GenerateConfig) { c.Format = "azure" }, []string{"--output-format"}},
		{"all at once", func(c *GenerateConfig) { c.Rate, c.Turns, c.MaxISL = -1, 0, -3 }, []string{"--rate -1", "--turns 0", "--max-isl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, genConfig(tt.mod).Validate(), tt.want...)
		})
	}
	if err := genConfig(func(*GenerateConfig) {}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}
