package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/reprise-bench/reprise/internal/exitcode"
)

// Command is the `reprise compare` command line, its flags as given:
// [Command.Run] parses and checks them before any run is read.
type Command struct {
	// Args are the sides: run directories, directories of repeated runs,
	// and "vs" between sides of several.
	Args      []string
	JSON      bool     // --json
	FailOn    []string // --fail-on, one METRIC:CHANGE each ([ParseThresholds])
	Level     float64  // --level
	Resamples int      // --resamples
	Seed      uint64   // --seed
	Unpaired  bool     // --unpaired
	MinEffect string   // --min-effect, a percentage such as 2% or a fraction
	// EquivalentWithin is --equivalent-within, a percentage; nil when it
	// was not given.
	EquivalentWithin *string
	// Targets is --targets, comma-separated target indexes; nil when it
	// was not given.
	Targets *string
}

// Run is `reprise compare` with c's command line: it parses and checks c (a usage error, exit
// code 2, names every problem at once), loads the sides (the targets of
// one run with c.Targets), compares each side after the first with the
// first ([CompareSides]) and writes the comparison to stdout ([Write]). A
// metric significantly worse beyond a --fail-on threshold is an
// [exitcode.SLOBreach] error, returned after the comparison is written.
func (c Command) Run(ctx context.Context, stdout io.Writer) error {
	p, err := c.parse()
	if err != nil {
		return exitcode.UsageError(err, "see 'reprise compare --help'")
	}
	gates, _ := ParseThresholds(p.failOn)
	sides, err := p.load(ctx)
	if err != nil {
		return err
	}
	results, err := CompareSides(sides, p.cfg)
	if err != nil {
		return err
	}
	if err := Write(stdout, results, gates, p.json); err != nil {
		return err
	}
	if err := Regressions(results, gates); err != nil {
		return &exitcode.Error{Code: exitcode.SLOBreach, Err: err}
	}
	return nil
}

// plan is a parsed [Command].
type plan struct {
	args    []string
	targets []int // --targets: the sides are these targets of the one run
	json    bool
	failOn  []string
	cfg     Config
}

// parse parses c's flags into a plan and validates it, reporting every
// problem at once.
func (c Command) parse() (plan, error) {
	cfg := NewConfig()
	cfg.Level, cfg.Resamples, cfg.Seed, cfg.Unpaired = c.Level, c.Resamples, c.Seed, c.Unpaired
	var perr []error
	var err error
	if cfg.MinEffect, err = parsePercent("--min-effect", c.MinEffect); err != nil {
		perr = append(perr, err)
	}
	if c.EquivalentWithin != nil {
		if cfg.EquivalentWithin, err = parsePercent("--equivalent-within", *c.EquivalentWithin); err != nil {
			perr = append(perr, err)
		}
	}
	p := plan{args: c.Args, json: c.JSON, failOn: c.FailOn, cfg: cfg}
	if c.Targets != nil {
		ts, terr := parseTargets(*c.Targets)
		p.targets = ts
		perr = append(perr, terr)
	}
	return p, errors.Join(append(perr, p.validate())...)
}

// load loads the sides p compares: each target of the one run with
// --targets, else each side's run directories.
func (p plan) load(ctx context.Context) ([][]*Run, error) {
	if p.targets == nil {
		ss, err := p.sides()
		if err != nil {
			return nil, err
		}
		return LoadSides(ctx, ss)
	}
	var sides [][]*Run
	for _, t := range p.targets {
		r, err := LoadTarget(ctx, p.args[0], t)
		if err != nil {
			return nil, exitcode.UsageError(err, "--targets names targets by index from 0, in the order of the run's --url")
		}
		sides = append(sides, []*Run{r})
	}
	return sides, nil
}

// sides splits the arguments into sides: separated by "vs" when one is
// given (A1 A2 vs B1 B2), else one directory a side. A directory of
// repeated runs (--runs: run-1 … run-N) is its runs.
func (p plan) sides() ([][]string, error) {
	var out [][]string
	cur := []string{}
	for _, a := range p.args {
		if a == "vs" {
			out = append(out, cur)
			cur = []string{}
			continue
		}
		dirs, err := Replicates(a)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(p.args, "vs") {
			out = append(out, dirs)
			continue
		}
		cur = append(cur, dirs...)
	}
	if slices.Contains(p.args, "vs") {
		out = append(out, cur)
	}
	return out, nil
}

// validate reports every problem at once.
func (p plan) validate() error {
	var errs []error
	switch {
	case p.targets != nil && len(p.args) != 1:
		errs = append(errs, fmt.Errorf("--targets compares the targets of one run: want one run directory, got %d", len(p.args)))
	case p.targets != nil && len(p.targets) < 2:
		errs = append(errs, errors.New("--targets: want two or more target indexes, such as 0,1"))
	case p.targets != nil && slices.Contains(p.args, "vs"):
		errs = append(errs, errors.New("--targets compares the targets of one run: it takes no \"vs\""))
	case p.targets == nil && slices.Contains(p.args, "vs"):
		sides, _ := p.sides()
		for i, side := range sides {
			if len(side) == 0 {
				errs = append(errs, fmt.Errorf("side %d has no run directory: write A1 A2 vs B1 B2, each side one or more run directories", i+1))
			}
		}
	case p.targets == nil && len(p.args) < 2:
		errs = append(errs, fmt.Errorf("want two or more run directories (A B [C…], or A1 A2 vs B1 B2), or one with --targets, got %d", len(p.args)))
	}
	for _, d := range p.args {
		if d == "vs" {
			continue
		}
		switch st, err := os.Stat(d); {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("run directory %s does not exist: give directories written by reprise replay (their --out, or ones under runs/)", d))
		case err != nil:
			errs = append(errs, fmt.Errorf("run directory: %w", err))
		case !st.IsDir():
			errs = append(errs, fmt.Errorf("%s is a file, not a run directory", d))
		}
	}
	if err := p.cfg.Validate(); err != nil {
		errs = append(errs, spellFlags(err))
	}
	if _, err := ParseThresholds(p.failOn); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// spellFlags names [Config] fields in err as the flags that set them.
func spellFlags(err error) error {
	r := strings.NewReplacer("Level ", "--level ", "Resamples ", "--resamples ", "MinEffect ", "--min-effect ", "EquivalentWithin ", "--equivalent-within ")
	return errors.New(r.Replace(err.Error()))
}

// parsePercent parses a percentage such as "2%" (or a fraction such as
// 0.02) into a fraction; flag names it in the error.
func parsePercent(flag, v string) (float64, error) {
	t := strings.TrimSpace(v)
	pct := strings.HasSuffix(t, "%")
	x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return 0, fmt.Errorf("%s %q: want a percentage such as 2%%", flag, v)
	}
	if pct {
		x /= 100
	}
	return x, nil
}

// parseTargets parses --targets: comma-separated target indexes.
func parseTargets(v string) ([]int, error) {
	ts := []int{}
	for f := range strings.SplitSeq(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 {
			return nil, fmt.Errorf("--targets %q: want target indexes from 0, comma-separated, such as 0,1", v)
		}
		ts = append(ts, i)
	}
	return ts, nil
}
