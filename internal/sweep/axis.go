package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise"
)

// The settings a sweep can vary, named as their replay flags.
const (
	Concurrency = "concurrency"            // Options.Replay.Concurrency
	RequestRate = "request-rate"           // Options.Replay.RequestRate
	Speedup     = "speedup"                // Options.Replay.Speedup
	ISL         = "isl"                    // Options.Synthetic.ISL
	OSL         = "osl"                    // Options.Synthetic.OSL
	ISLStdDev   = "isl-stddev"             // Options.Synthetic.ISLStdDev
	OSLStdDev   = "osl-stddev"             // Options.Synthetic.OSLStdDev
	TurnsMean   = "conversation-turn-mean" // Options.Synthetic.TurnsMean
)

// ProfileSettings are the settings a profile sweep can vary: AIPerf's
// sweepable flags (comma lists, variants and sampling dimensions).
var ProfileSettings = []string{Concurrency, RequestRate, ISL, ISLStdDev, OSL, OSLStdDev, TurnsMean}

// known reports whether name is a setting a sweep can vary.
func known(name string) bool {
	return slices.Contains(Settings, name) || slices.Contains(ProfileSettings, name)
}

// stddev reports whether setting name may be 0 (a standard deviation).
func stddev(name string) bool { return name == ISLStdDev || name == OSLStdDev }

// Settings lists the settings a sweep can vary: the request shape first,
// then the load. The reprise sweep command orders its axes so, which
// makes a load the inner axis of a two-axis sweep, the one the stop
// conditions end.
var Settings = []string{ISL, OSL, Concurrency, RequestRate, Speedup}

// maxAxisValues bounds the values of one axis, so a typo such as
// 1:1e9:+1 fails instead of planning a billion points.
const maxAxisValues = 1000

// Axis is one swept setting and its values, in sweep order.
type Axis struct {
	// Name is one of [Settings].
	Name string `json:"name"`
	// Spec is the list or range as given ("1,2,4", "1:64:x2").
	Spec string `json:"spec"`
	// Values are the settings' values in the order they are run.
	Values []float64 `json:"values"`
}

// ParseAxis parses the values of setting name: a comma-separated list
// ("1,2,4,8"), a geometric range "A:B:xF" (A, A·F, A·F², … up to B, F > 1)
// or a linear range "A:B:+S" (A, A+S, … up to B, S > 0). B is included
// when the steps reach it within 1e-9 relative. Concurrency values must
// be whole numbers ≥ 1; the others positive.
func ParseAxis(name, spec string) (Axis, error) {
	a := Axis{Name: name, Spec: spec}
	if !known(name) {
		return a, fmt.Errorf("sweep setting %q: want one of %s", name, strings.Join(append(slices.Clone(Settings), ISLStdDev, OSLStdDev, TurnsMean), ", "))
	}
	bad := func(format string, args ...any) (Axis, error) {
		return a, fmt.Errorf("--%s %q: %s", name, spec, fmt.Sprintf(format, args...))
	}
	num := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		return v, nil
	}
	if parts := strings.Split(spec, ":"); len(parts) == 3 {
		lo, err1 := num(parts[0])
		hi, err2 := num(parts[1])
		if err1 != nil || err2 != nil {
			return bad("range A:B:STEP: %v", firstErr(err1, err2))
		}
		step := strings.TrimSpace(parts[2])
		if len(step) < 2 || (step[0] != 'x' && step[0] != '+') {
			return bad("range step %q: want xF (geometric, e.g. x2) or +S (linear, e.g. +4)", step)
		}
		f, err := num(step[1:])
		if err != nil {
			return bad("range step: %v", err)
		}
		if lo <= 0 || hi < lo {
			return bad("range A:B needs 0 < A ≤ B")
		}
		for v, i := lo, 0; v <= hi*(1+1e-9); i++ {
			if len(a.Values) == maxAxisValues {
				return bad("more than %d values", maxAxisValues)
			}
			a.Values = append(a.Values, v)
			if step[0] == 'x' {
				if f <= 1 {
					return bad("geometric factor %v must be > 1", f)
				}
				v = lo * math.Pow(f, float64(i+1))
			} else {
				if f <= 0 {
					return bad("linear step %v must be > 0", f)
				}
				v = lo + f*float64(i+1)
			}
		}
	} else if strings.Contains(spec, ":") {
		return bad("a range is A:B:xF or A:B:+S")
	} else {
		for f := range strings.SplitSeq(spec, ",") {
			if strings.TrimSpace(f) == "" {
				return bad("empty value")
			}
			v, err := num(f)
			if err != nil {
				return bad("%v", err)
			}
			if len(a.Values) == maxAxisValues {
				return bad("more than %d values", maxAxisValues)
			}
			a.Values = append(a.Values, v)
		}
	}
	seen := map[float64]bool{}
	for _, v := range a.Values {
		switch {
		case v < 0 || (v == 0 && !stddev(name)):
			return bad("value %v must be > 0", v)
		case (name == Concurrency || name == TurnsMean) && v != math.Trunc(v):
			return bad("concurrency %v must be a whole number", v)
		case seen[v]:
			return bad("value %v appears twice", v)
		}
		seen[v] = true
	}
	return a, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Apply sets setting name of o to v.
func Apply(o *reprise.Options, name string, v float64) {
	switch name {
	case Concurrency:
		o.Replay.Concurrency = int(v)
	case RequestRate:
		o.Replay.RequestRate = v
	case Speedup:
		o.Replay.Speedup = v
	case ISL:
		o.Synthetic.ISL = v
	case OSL:
		o.Synthetic.OSL = v
	case ISLStdDev:
		o.Synthetic.ISLStdDev = v
	case OSLStdDev:
		o.Synthetic.OSLStdDev = v
	case TurnsMean:
		o.Synthetic.TurnsMean = v
	default:
		panic("BUG: sweep.Apply: unknown setting " + name)
	}
}

// formatValue spells a value in point names and tables: the shortest
// decimal that reads back as v.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Point is one setting of every axis.
type Point struct {
	// Names and Values are the axes' names and this point's values, in
	// axis order.
	Names  []string  `json:"names"`
	Values []float64 `json:"values"`
	// Label, when not empty, is the point's name (a profile sweep's
	// AIPerf directory name, concurrency_10, or a variant's name).
	Label string `json:"label,omitempty"`
	// Trial, when > 0, is the trial of a repeated sweep the point
	// belongs to ([Trials]).
	Trial int `json:"trial,omitempty"`
}

// Name is the point's directory name: its Label, else "request-rate=8"
// or, with several axes, "concurrency=4_isl=512".
func (p Point) Name() string {
	if p.Label != "" {
		return p.Label
	}
	parts := make([]string, len(p.Names))
	for i, n := range p.Names {
		parts[i] = n + "=" + formatValue(p.Values[i])
	}
	return strings.Join(parts, "_")
}

// Apply sets the point's settings in o.
func (p Point) Apply(o *reprise.Options) {
	for i, n := range p.Names {
		Apply(o, n, p.Values[i])
	}
}

// Grid returns the points of the axes' cross product, the last axis
// varying fastest (the last axis is swept for each setting of the ones
// before it).
func Grid(axes []Axis) []Point {
	if len(axes) == 0 {
		return nil
	}
	names := make([]string, len(axes))
	for i, a := range axes {
		names[i] = a.Name
	}
	var out []Point
	var rec func(i int, vals []float64)
	rec = func(i int, vals []float64) {
		if i == len(axes) {
			out = append(out, Point{Names: names, Values: append([]float64(nil), vals...)})
			return
		}
		for _, v := range axes[i].Values {
			rec(i+1, append(vals, v))
		}
	}
	rec(0, nil)
	return out
}

// AIPerfLabel is a point's directory name in AIPerf's layout:
// concurrency_10, or concurrency_10_isl_512 with several settings.
func AIPerfLabel(p Point) string {
	parts := make([]string, len(p.Names))
	for i, n := range p.Names {
		parts[i] = strings.ReplaceAll(n, "-", "_") + "_" + formatValue(p.Values[i])
	}
	return strings.Join(parts, "_")
}
