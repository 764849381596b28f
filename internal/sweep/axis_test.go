package sweep

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAxis(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		want       []float64
		err        bool
	}{
		{RequestRate, "1,2,4,8", []float64{1, 2, 4, 8}, false},
		{RequestRate, "1:64:x2", []float64{1, 2, 4, 8, 16, 32, 64}, false},
		{RequestRate, "1:50:x2", []float64{1, 2, 4, 8, 16, 32}, false}, // 64 is past B
		{Concurrency, "4:16:+4", []float64{4, 8, 12, 16}, false},
		{Speedup, "0.1:0.3:+0.1", []float64{0.1, 0.2, 0.30000000000000004}, false}, // B reached within 1e-9
		{Speedup, "0.5", []float64{0.5}, false},
		{Concurrency, "1.5", nil, true},
		{RequestRate, "1:8:x1", nil, true},
		{RequestRate, "1:8:+0", nil, true},
		{RequestRate, "8:1:+1", nil, true},
		{RequestRate, "0,1", nil, true},
		{RequestRate, "1,1", nil, true},
		{RequestRate, "1,,2", nil, true},
		{RequestRate, "1:2", nil, true},
		{RequestRate, "1:2:*2", nil, true},
		{RequestRate, "1:1e9:+1", nil, true}, // too many points
		{"tokens", "1,2", nil, true},
	} {
		a, err := ParseAxis(c.name, c.spec)
		if (err != nil) != c.err {
			t.Errorf("ParseAxis(%s, %q) error %v, want error %v", c.name, c.spec, err, c.err)
			continue
		}
		if !c.err && !cmp.Equal(a.Values, c.want) {
			t.Errorf("ParseAxis(%s, %q) = %v, want %v", c.name, c.spec, a.Values, c.want)
		}
	}
}

func TestGridAndNames(t *testing.T) {
	pts := Grid([]Axis{{Name: OSL, Values: []float64{128, 256}}, {Name: RequestRate, Values: []float64{0.5, 2}}})
	var names []string
	for _, p := range pts {
		names = append(names, p.Name())
	}
	want := []string{"osl=128_request-rate=0.5", "osl=128_request-rate=2", "osl=256_request-rate=0.5", "osl=256_request-rate=2"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("grid (-want +got):\n%s", diff)
	}
}

func TestDeriveSeed(t *testing.T) {
	a, b := DeriveSeed(1, "request-rate=8"), DeriveSeed(1, "request-rate=16")
	if a == b || a != DeriveSeed(1, "request-rate=8") || a == DeriveSeed(2, "request-rate=8") {
		t.Errorf("seeds %d %d: want distinct per label and base, equal for equal inputs", a, b)
	}
}

func FuzzParseAxis(f *testing.F) {
	for _, s := range []string{"1,2,4", "1:64:x2", "4:32:+4", "0.5", "1:2", "x", "1:8:x1.0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		for _, name := range Settings {
			a, err := ParseAxis(name, spec)
			if err != nil {
				continue
			}
			if len(a.Values) == 0 || len(a.Values) > maxAxisValues {
				t.Fatalf("%s %q: %d values", name, spec, len(a.Values))
			}
			seen := map[float64]bool{}
			for _, v := range a.Values {
				if !(v > 0) || math.IsInf(v, 0) || seen[v] || (name == Concurrency && v != math.Trunc(v)) {
					t.Fatalf("%s %q: bad value %v in %v", name, spec, v, a.Values)
				}
				seen[v] = true
			}
		}
	})
}
