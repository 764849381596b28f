package sweep

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzLoadManifest reads arbitrary manifest.json bytes as ReadLoadSeries
// does: it never panics, and a load it finds is one of the sweep's
// settings with the manifest's value for it.
func FuzzLoadManifest(f *testing.F) {
	f.Add([]byte(`{"mode":"concurrency","replay":{"concurrency":10,"request_rate":0,"speedup":1}}`))
	f.Add([]byte(`{"mode":"rate","replay":{"request_rate":2.5},"goodput":"ttft:500","min_good_fraction":0.9}`))
	f.Add([]byte(`{"mode":"fixed","replay":{"speedup":4}}`))
	f.Add([]byte(`{"mode":"user-centric"}`))
	f.Add([]byte(`{"mode":7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l runLoad
		if json.Unmarshal(data, &l) != nil {
			return
		}
		name, v, ok := l.setting()
		if !ok {
			return
		}
		if !slices.Contains(Settings, name) {
			t.Fatalf("setting %q is not a sweep setting", name)
		}
		want := map[string]float64{Concurrency: l.Replay.Concurrency, RequestRate: l.Replay.RequestRate, Speedup: l.Replay.Speedup}[name]
		if v != want { // JSON has no NaN
			t.Fatalf("setting %s = %v, manifest says %v", name, v, want)
		}
	})
}

// FuzzParseVariant: any text either fails or gives a point whose names
// are profile settings, set once each, with values a sweep takes, and a
// label that is a directory name.
func FuzzParseVariant(f *testing.F) {
	for _, s := range []string{"small: concurrency=8, isl=512", "isl_stddev=10, --osl=64", "a: b", "x:concurrency=0", "../x: isl=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseVariant(s, 1)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for i, n := range p.Names {
			if !known(n) || seen[n] {
				t.Fatalf("%q gave setting %q (twice: %v)", s, n, seen[n])
			}
			seen[n] = true
			if v := p.Values[i]; v < 0 || v != v {
				t.Fatalf("%q gave %s = %v", s, n, v)
			}
		}
		if p.Label == "" || p.Label == "." || p.Label == ".." || strings.ContainsAny(p.Label, `/\`) {
			t.Fatalf("%q gave label %q", s, p.Label)
		}
	})
}

// FuzzParsePairs: any text either fails or gives pairs of lengths ≥ 1.
func FuzzParsePairs(f *testing.F) {
	for _, s := range []string{"512:128,2048:256", "512x128", "1:0", ",", "a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ParsePairs(s)
		if err != nil {
			return
		}
		for _, p := range ps {
			if !(p[0] >= 1 && p[1] >= 1) {
				t.Fatalf("%q gave pair %v", s, p)
			}
		}
	})
}
