package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	isearch "github.com/reprise-bench/reprise/internal/search"
)

// TestTiersAgainstTheMock: two tiers of request latency (avg ≤ 400 and
// ≤ 300 ms) find the largest concurrencies the mock's latency curve
// derives, each within 10 %, and the second tier reuses the first's
// measurements: fewer runs than the two tiers' searches took probes.
func TestTiersAgainstTheMock(t *testing.T) {
	if raceEnabled {
		t.Skip("a calibration against the mock's latency curve: the race detector slows the mock")
	}
	if testing.Short() {
		t.Skip("about 40 s of probes against the mock")
	}
	needCPU(t)
	cfg := monotoneConfig(t)
	var tiers []Tier
	for i, s := range []string{"silver:request_latency:avg:<=:400", "gold:request_latency:avg:le:300"} {
		tr, err := ParseTier(s, i+1)
		if err != nil {
			t.Fatal(err)
		}
		tiers = append(tiers, tr)
	}
	cfg.Search = &SearchConfig{Space: []isearch.Dimension{{Name: Concurrency, Lo: 1, Hi: 32, Kind: isearch.KindInt}},
		Objectives: []isearch.Objective{{Metric: "output_token_throughput:avg", Maximize: true}},
		Tiers:      tiers, MaxIterations: 20, InitialPoints: 4, Seed: 1}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Search
	t.Log(sr.Text)
	if len(sr.Tiers) != 2 {
		t.Fatalf("%d tier answers, want 2", len(sr.Tiers))
	}
	separate := 0
	for i, limit := range []float64{400, 300} {
		tr := sr.Tiers[i]
		separate += tr.Probes
		want := largest(recipeMock.e2eAt, limit, 32)
		if rel := math.Abs(tr.Value-want) / want; rel > 0.10 {
			t.Errorf("tier %s: answer %v, derived from the mock's settings %v: off by %.1f%% (> 10%%)", tr.Label, tr.Value, want, 100*rel)
		}
	}
	if sr.Tiers[1].Reused == 0 || len(sr.Probes) >= separate {
		t.Errorf("%d runs for tiers that took %d probes (second reused %d): the tiers shared no measurement", len(sr.Probes), separate, sr.Tiers[1].Reused)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var mf Manifest
	if err := json.Unmarshal(b, &mf); err != nil {
		t.Fatal(err)
	}
	if mf.Search == nil || len(mf.Search.Tiers) != 2 || mf.Search.Tiers[1] != sr.Tiers[1] {
		t.Errorf("sweep.json's tiers %+v differ from the result's %+v", mf.Search, sr.Tiers)
	}
}

// TestParseTier: a tier is LABEL:FILTER,… or FILTER,… (labelled
// tier_N); bad filters are errors.
func TestParseTier(t *testing.T) {
	tr, err := ParseTier("fast:request_latency:p99:<=:300,time_to_first_token:avg:lt:50", 1)
	if err != nil || tr.Label != "fast" || len(tr.Constraints) != 2 || tr.Constraints[1].Op != "<" || tr.Constraints[1].Threshold != 50 {
		t.Errorf("got %+v, %v", tr, err)
	}
	tr, err = ParseTier("request_latency:avg:<=:300", 2)
	if err != nil || tr.Label != "tier_2" || len(tr.Constraints) != 1 {
		t.Errorf("got %+v, %v", tr, err)
	}
	for _, bad := range []string{"", "fast:", "fast:request_latency:avg:<=:x", ":request_latency:avg:<=:1", "a,b"} {
		if _, err := ParseTier(bad, 1); err == nil {
			t.Errorf("ParseTier(%q) took it", bad)
		}
	}
	c := &SearchConfig{Space: []isearch.Dimension{{Name: Concurrency, Lo: 1, Hi: 8, Kind: isearch.KindInt}}, Tiers: []Tier{tr}}
	if c.validateTiers() == nil {
		t.Error("one tier taken")
	}
	ge := Tier{Label: "g", Constraints: []isearch.Constraint{{Metric: "output_token_throughput:avg", Op: ">=", Threshold: 1}}}
	c.Tiers = append(c.Tiers, ge)
	if c.validateTiers() == nil {
		t.Error("a lower limit taken in a tier")
	}
}

// FuzzParseTier: ParseTier does not panic, and a tier it takes has a
// label and a constraint.
func FuzzParseTier(f *testing.F) {
	for _, s := range []string{"fast:request_latency:p99:<=:300,time_to_first_token:avg:lt:50", "request_latency:avg:<=:300", "a:b", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTier(s, 1)
		if err == nil && (tr.Label == "" || len(tr.Constraints) == 0) {
			t.Errorf("ParseTier(%q) = %+v", s, tr)
		}
	})
}

// TestTierContradicted: a tier's answer that another tier's probe
// contradicts (a load below it over the tier's SLA) is not trusted: the
// tier says it cannot tell, and converges no more. One that no probe
// contradicts stands.
func TestTierContradicted(t *testing.T) {
	cs := []isearch.Constraint{{Metric: "request_latency.avg", Op: "<=", Threshold: 600}}
	probe := func(c, lat float64, valid bool) SearchProbe {
		return SearchProbe{Point: fmt.Sprintf("concurrency_%g", c), Settings: map[string]float64{"concurrency": c},
			Validity: Validity{Valid: valid}, Metrics: map[string]float64{"request_latency.avg": lat}}
	}
	probes := []SearchProbe{probe(1, 22, true), probe(16, 562, true), probe(8, 785, true), probe(4, 900, false)}
	tr := TierResult{Label: "silver", Value: 16, Converged: true, Text: "silver: concurrency 16"}
	contradict(&tr, cs, probes, "concurrency")
	if tr.Converged || !strings.Contains(tr.CannotTell, "concurrency 8 (concurrency_8) measured request_latency.avg = 785") || !strings.Contains(tr.Text, "cannot tell") {
		t.Errorf("contradicted tier %+v", tr)
	}
	tr = TierResult{Label: "silver", Value: 16, Converged: true}
	contradict(&tr, cs, append(probes[:2:2], probes[3]), "concurrency")
	if !tr.Converged || tr.CannotTell != "" {
		t.Errorf("an invalid probe, or none over the SLA, contradicts nothing: %+v", tr)
	}
	// A pass above the failing load: llama.cpp under load measured
	// concurrency 7 at 818 ms and 8 at 380 ms.
	tr = TierResult{Label: "silver", Value: 3, Above: 7, Converged: false}
	contradict(&tr, cs, []SearchProbe{probe(3, 273, true), probe(7, 818, true), probe(8, 380, true)}, "concurrency")
	if !strings.Contains(tr.CannotTell, "concurrency 8 (concurrency_8) met the tier's filters, above the failing 7") {
		t.Errorf("a pass above the failure: %+v", tr)
	}
}
