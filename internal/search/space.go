package search

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kinds of a [Dimension].
const (
	KindFloat = "float"
	KindInt   = "int"
)

// Dimension is one setting a search or a sampling design varies, over
// [Lo, Hi].
type Dimension struct {
	// Name is the setting, as a profile flag name ("concurrency") or a
	// path ("load.concurrency").
	Name string  `json:"name"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	// Kind is KindFloat or KindInt (values rounded to whole numbers).
	Kind string `json:"kind"`
}

// ParseDimension reads "NAME:LO,HI[:int|float]" (AIPerf's
// --search-space and --sweep-dimension). Without a kind a dimension is
// int when both bounds are whole numbers, else float.
func ParseDimension(s string) (Dimension, error) {
	bad := func(format string, args ...any) (Dimension, error) {
		return Dimension{}, fmt.Errorf("%q: %s (want NAME:LO,HI[:int|float], e.g. concurrency:1,256:int)", s, fmt.Sprintf(format, args...))
	}
	name, rest, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return bad("no NAME:")
	}
	rng, kind, _ := strings.Cut(rest, ":")
	los, his, ok := strings.Cut(rng, ",")
	if !ok {
		return bad("no LO,HI")
	}
	lo, err1 := strconv.ParseFloat(strings.TrimSpace(los), 64)
	hi, err2 := strconv.ParseFloat(strings.TrimSpace(his), 64)
	if err := errors.Join(err1, err2); err != nil || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return bad("bounds are not numbers")
	}
	if !(lo < hi) {
		return bad("want LO < HI")
	}
	d := Dimension{Name: name, Lo: lo, Hi: hi, Kind: strings.TrimSpace(kind)}
	switch d.Kind {
	case "":
		d.Kind = KindFloat
		if lo == math.Trunc(lo) && hi == math.Trunc(hi) {
			d.Kind = KindInt
		}
	case KindInt:
		if lo != math.Trunc(lo) || hi != math.Trunc(hi) {
			return bad("an int dimension has whole-number bounds")
		}
	case KindFloat:
	default:
		return bad("kind %q: want int or float", d.Kind)
	}
	return d, nil
}

// At maps u in [0, 1] to the dimension's value (rounded for an int
// dimension).
func (d Dimension) At(u float64) float64 {
	v := d.Lo + min(max(u, 0), 1)*(d.Hi-d.Lo)
	if d.Kind == KindInt {
		v = math.Round(v)
	}
	return v
}

// unit maps a value of the dimension to [0, 1].
func (d Dimension) unit(v float64) float64 { return (v - d.Lo) / (d.Hi - d.Lo) }

// String is the dimension as ParseDimension reads it.
func (d Dimension) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return d.Name + ":" + f(d.Lo) + "," + f(d.Hi) + ":" + d.Kind
}

// logScaled reports whether the search models dimension d on a log
// scale: a positive range spanning a factor of 16 or more (a load from 1
// to 1024 has its interesting part in the low end).
func logScaled(d Dimension) bool { return d.Lo > 0 && d.Hi/d.Lo >= 16 }

// toUnit and fromUnit map between a dimension's values and the [0, 1]
// the model works in.
func toUnit(d Dimension, v float64) float64 {
	if logScaled(d) {
		return math.Log(v/d.Lo) / math.Log(d.Hi/d.Lo)
	}
	return d.unit(v)
}

func fromUnit(d Dimension, u float64) float64 {
	if logScaled(d) {
		v := d.Lo * math.Pow(d.Hi/d.Lo, min(max(u, 0), 1))
		if d.Kind == KindInt {
			v = math.Round(v)
		}
		return min(max(v, d.Lo), d.Hi)
	}
	return d.At(u)
}
