package reprise

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestParseSeqDist(t *testing.T) {
	two := []SeqDistPair{{ISL: 256, OSL: 128, Weight: 60}, {ISL: 512, ISLStdDev: 20, OSL: 256, OSLStdDev: 15, Weight: 40}}
	for _, s := range []string{
		"256,128:60;512|20,256|15:40",
		" 256 , 128 : 60 ; 512|20,256|15:40; ",
		"[(256,128):60,(512|20,256|15):40]",
		`{"pairs":[{"isl":256,"osl":128,"prob":60},{"isl":512,"isl_stddev":20,"osl":256,"osl_stddev":15,"prob":40}]}`,
	} {
		got, err := ParseSeqDist(s)
		if err != nil || !reflect.DeepEqual(got, two) {
			t.Errorf("ParseSeqDist(%q) = %+v, %v; want %+v", s, got, err, two)
		}
	}
	for s, want := range map[string]string{
		"":                     "empty",
		"256,128:60":           "sum to 60",
		"256:100":              "want ISL,OSL",
		"0,128:100":            "at least 1 token",
		"256,128:x":            "percentage",
		"256|-1,128:100":       "negative",
		"[(256,128):100":       "ends with ]",
		`{"pairs":[`:           "JSON form",
		"[(256,128)100]":       ":PCT",
		"256,128:50;512,1:150": "(0, 100]",
	} {
		if _, err := ParseSeqDist(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSeqDist(%q): %v; want an error with %q", s, err, want)
		}
	}
}

// TestSeqDistRows: the synthetic rows' lengths follow the mixture's
// probabilities (seeded: equal seeds, equal rows).
func TestSeqDistRows(t *testing.T) {
	pairs, err := ParseSeqDist("100,10:75;1000,50:25")
	if err != nil {
		t.Fatal(err)
	}
	s := SyntheticLoad{SeqDist: pairs}
	rc := NewOptions().Replay
	rc.RequestCount, rc.Seed = 4000, 3
	rows := syntheticRows(&s, &rc, 1<<20)
	if len(rows) != 4000 {
		t.Fatalf("%d rows, want 4000", len(rows))
	}
	short := 0
	for _, r := range rows {
		switch {
		case r.InputTokens == 100 && r.OutputTokens == 10:
			short++
		case r.InputTokens == 1000 && r.OutputTokens == 50:
		default:
			t.Fatalf("row %d: %d/%d tokens, not a pair of the mixture", r.Index, r.InputTokens, r.OutputTokens)
		}
	}
	// 3000 expected; the binomial's standard deviation is about 27.
	if short < 2850 || short > 3150 {
		t.Errorf("%d short rows of 4000, want about 3000", short)
	}
	again := syntheticRows(&s, &rc, 1<<20)
	if !reflect.DeepEqual(rows, again) {
		t.Error("equal seeds gave different rows")
	}
	if isl, osl := SeqDistMeans(pairs); isl != 325 || osl != 20 {
		t.Errorf("means %v, %v; want 325, 20", isl, osl)
	}
}

func FuzzParseSeqDist(f *testing.F) {
	for _, s := range []string{"256,128:60;512|20,256|15:40", "[(1,1):100]", `{"pairs":[{"isl":1,"osl":1,"prob":100}]}`, "[(", "1,1:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pairs, err := ParseSeqDist(s)
		if err != nil {
			return
		}
		if err := checkSeqDist(pairs); err != nil {
			t.Fatalf("%q parsed to an invalid mixture: %v", s, err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		if in, out := seqDistLengths(pairs, rng, 100); in < 1 || in > 100 || out < 1 {
			t.Fatalf("%q: lengths %d, %d", s, in, out)
		}
	})
}
