package config

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzParse: any bytes give Args or an error, never a panic; every Arg
// names a flag and its line; and the Args written back as a flat file
// parse to the same Args (the file → flags mapping round-trips).
func FuzzParse(f *testing.F) {
	f.Add([]byte(Template))
	f.Add([]byte("loadgen:\n  concurrency: [1, 2]\nsweep:\n  variants:\n    - {name: a, isl: 1}\n"))
	f.Add([]byte("endpoint: {model: [a, b], url: x}\ninput: {extra_inputs: {a: {b: 1}}, goodput: {ttft: 1}}\n"))
	f.Add([]byte("sweep: {sampling: sobol, samples: 4, dimensions: {isl: {low: 1, high: 2, type: int}}}\n"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		args, _, err := Parse("f.yaml", data, AIPerf(own, []string{"header"}))
		if err != nil {
			return
		}
		flat := map[string][]string{}
		var order []string
		names := map[string]bool{}
		for _, a := range args {
			if a.Flag == "" || a.Line <= 0 {
				t.Fatalf("arg %+v has no flag or line", a)
			}
			if _, ok := flat[a.Flag]; !ok {
				order = append(order, a.Flag)
			}
			flat[a.Flag] = append(flat[a.Flag], a.Value)
			names[a.Flag] = true
		}
		// Written back with every flag repeatable, one list item per Arg.
		var b strings.Builder
		for _, fl := range order {
			out, err := yaml.Marshal(map[string][]string{fl: flat[fl]})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(out)
		}
		s := Flat(mapKeys(names), mapKeys(names))
		again, _, err := Parse("g.yaml", []byte(b.String()), s)
		if err != nil {
			t.Fatalf("re-parse of\n%s: %v", b.String(), err)
		}
		got := map[string][]string{}
		for _, a := range again {
			got[a.Flag] = append(got[a.Flag], a.Value)
		}
		for fl, vs := range flat {
			if strings.Join(got[fl], "\x00") != strings.Join(vs, "\x00") {
				t.Fatalf("flag %s: %q, then %q", fl, vs, got[fl])
			}
		}
	})
}
