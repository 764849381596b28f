package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	isearch "github.com/reprise-bench/reprise/internal/search"
)

// Sweep types of a profile sweep (AIPerf's --sweep-type).
const (
	SweepGrid = "grid"
	SweepZip  = "zip"
)

// DesignFile is the sampling design of a sampled sweep, in the sweep
// directory.
const DesignFile = "sampling_design.json"

// ProfileSweep is a profile command's sweep, as its flags (or a YAML
// config's sweep: block) give it: comma lists of AIPerf's sweepable flags
// (grid or zip), scenarios (--variant), or a sampling design over ranges
// (--sweep-sampling). [ExpandProfile] turns it into the points to run.
type ProfileSweep struct {
	// Lists are the flags given a comma list, in the order given
	// (names of [ProfileSettings]).
	Lists []Axis
	// Type is SweepGrid (the cross product, the last list varying
	// fastest; the default) or SweepZip (the i-th values together; the
	// lists of equal length).
	Type string
	// Variants are --variant/--sweep-variant scenarios, "[NAME:]
	// KEY=VALUE, …" with keys among ProfileSettings (at least two).
	Variants []string
	// Sampling is isearch.MethodSobol or MethodLatinHypercube; Samples
	// the number of points, Dimensions the ranges
	// ("FLAG:LO,HI[:int|float]") and Seed the design's seed.
	Sampling   string
	Samples    int
	Dimensions []string
	Seed       uint64
	// Trials, when > 1, repeats the whole sweep that many times
	// (--num-profile-runs N with --parameter-sweep-mode repeated:
	// [Trials]).
	Trials int
}

// Active reports whether ps sweeps anything.
func (ps *ProfileSweep) Active() bool {
	return len(ps.Lists) > 0 || len(ps.Variants) > 0 || ps.Sampling != "" || len(ps.Dimensions) > 0
}

// Expansion is the points of a profile sweep, in run order, and the
// sampling design (sampled sweeps only).
type Expansion struct {
	Points []Point
	Design *isearch.Design
}

// ExpandProfile expands a profile sweep into the runs it makes, each a
// [Point] named as AIPerf names its artifact sub-directory
// (concurrency_10, concurrency_10_isl_512, a variant's name). It checks
// AIPerf's rules: zip lists of equal length; variants at least two,
// exclusive with comma lists; sampling needs dimensions and a sample
// count and is exclusive with both. reprise config expand prints its
// result; reprise profile runs it. With Trials > 1 the whole list is
// repeated, once per trial ([Trials]).
func ExpandProfile(ps ProfileSweep) (*Expansion, error) {
	kinds := 0
	for _, on := range []bool{len(ps.Lists) > 0, len(ps.Variants) > 0, ps.Sampling != "" || len(ps.Dimensions) > 0} {
		if on {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, errors.New("comma lists, --variant and --sweep-sampling are three kinds of sweep: give one")
	}
	seen := map[string]bool{}
	for _, a := range ps.Lists {
		if !known(a.Name) {
			return nil, fmt.Errorf("--%s takes one value: the flags that take a comma list are %s", a.Name, flagList(ProfileSettings))
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("--%s given twice", a.Name)
		}
		seen[a.Name] = true
	}
	e := &Expansion{}
	switch {
	case len(ps.Lists) > 0:
		typ := ps.Type
		if typ == "" {
			typ = SweepGrid
		}
		switch typ {
		case SweepGrid:
			for _, p := range Grid(ps.Lists) {
				p.Label = AIPerfLabel(p)
				e.Points = append(e.Points, p)
			}
		case SweepZip:
			n := len(ps.Lists[0].Values)
			names := make([]string, len(ps.Lists))
			for i, a := range ps.Lists {
				names[i] = a.Name
				if len(a.Values) != n {
					return nil, fmt.Errorf("--sweep-type zip pairs the i-th values of every list: --%s has %d values, --%s %d", ps.Lists[0].Name, n, a.Name, len(a.Values))
				}
			}
			for i := range n {
				p := Point{Names: names}
				for _, a := range ps.Lists {
					p.Values = append(p.Values, a.Values[i])
				}
				p.Label = AIPerfLabel(p)
				e.Points = append(e.Points, p)
			}
		default:
			return nil, fmt.Errorf("--sweep-type %q: want grid or zip", ps.Type)
		}
	case len(ps.Variants) > 0:
		if len(ps.Variants) < 2 {
			return nil, errors.New("--variant: give at least two (AIPerf's rule; one variant is a plain run: give its flags)")
		}
		names := map[string]bool{}
		for i, v := range ps.Variants {
			p, err := ParseVariant(v, i+1)
			if err != nil {
				return nil, err
			}
			if names[p.Label] {
				return nil, fmt.Errorf("--variant %q: the name %s is taken by another variant", v, p.Label)
			}
			names[p.Label] = true
			e.Points = append(e.Points, p)
		}
	default:
		if ps.Sampling == "" || len(ps.Dimensions) == 0 || ps.Samples < 1 {
			return nil, errors.New("a sampled sweep needs --sweep-sampling sobol|latin_hypercube, --sweep-samples N ≥ 1 and at least one --sweep-dimension FLAG:LO,HI[:int|float]")
		}
		var dims []isearch.Dimension
		for _, s := range ps.Dimensions {
			d, err := isearch.ParseDimension(s)
			if err != nil {
				return nil, fmt.Errorf("--sweep-dimension %w", err)
			}
			d.Name = strings.TrimPrefix(d.Name, "--")
			if !known(d.Name) {
				return nil, fmt.Errorf("--sweep-dimension %q: %s cannot be sampled; want one of %s", s, d.Name, flagList(ProfileSettings))
			}
			if d.Name == Concurrency || d.Name == TurnsMean {
				d.Kind = isearch.KindInt
			}
			if d.Lo < 0 || (d.Lo == 0 && !stddev(d.Name)) || (d.Kind == isearch.KindInt && d.Lo < 1) {
				return nil, fmt.Errorf("--sweep-dimension %q: want a range of positive values", s)
			}
			dims = append(dims, d)
		}
		des, err := isearch.NewDesign(ps.Sampling, ps.Samples, dims, ps.Seed)
		if err != nil {
			return nil, fmt.Errorf("--sweep-sampling: %w", err)
		}
		e.Design = des
		names := make([]string, len(dims))
		for i, d := range dims {
			names[i] = d.Name
		}
		width := len(strconv.Itoa(ps.Samples))
		for i, v := range des.Points {
			e.Points = append(e.Points, Point{Names: names, Values: v, Label: fmt.Sprintf("sample_%0*d", max(width, 4), i+1)})
		}
	}
	e.Points = Trials(e.Points, ps.Trials)
	return e, nil
}

func flagList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return strings.Join(out, ", ")
}

// ParseVariant reads one scenario, "[NAME:] KEY=VALUE, …" (AIPerf's
// --variant), as a point; i numbers an unnamed one (variant_1). Keys are
// profile flag names among [ProfileSettings], with or without dashes.
func ParseVariant(s string, i int) (Point, error) {
	p := Point{Label: fmt.Sprintf("variant_%d", i)}
	body := s
	if name, rest, ok := strings.Cut(s, ":"); ok && !strings.Contains(name, "=") {
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, `/\ `) || name == "." || name == ".." {
			return p, fmt.Errorf("--variant %q: the name %q is a directory name: letters, digits, '-', '_', '.'", s, name)
		}
		p.Label, body = name, rest
	}
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(body, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.ReplaceAll(strings.TrimLeft(strings.TrimSpace(k), "-"), "_", "-")
		if !ok {
			return p, fmt.Errorf("--variant %q: %q is not KEY=VALUE", s, kv)
		}
		if !known(k) {
			return p, fmt.Errorf("--variant %q: key %q: a variant sets %s", s, k, flagList(ProfileSettings))
		}
		if seen[k] {
			return p, fmt.Errorf("--variant %q: %s set twice", s, k)
		}
		seen[k] = true
		ax, err := ParseAxis(k, strings.TrimSpace(v))
		if err != nil {
			return p, fmt.Errorf("--variant %q: %w", s, err)
		}
		if len(ax.Values) != 1 {
			return p, fmt.Errorf("--variant %q: %s takes one value in a variant", s, k)
		}
		p.Names, p.Values = append(p.Names, k), append(p.Values, ax.Values[0])
	}
	if len(p.Names) == 0 {
		return p, fmt.Errorf("--variant %q: no KEY=VALUE, e.g. 'small: concurrency=8, isl=512'", s)
	}
	for _, v := range p.Values {
		if math.IsNaN(v) {
			return p, fmt.Errorf("--variant %q: not a number", s)
		}
	}
	return p, nil
}
