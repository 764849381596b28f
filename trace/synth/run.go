package synth

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
)

// Env is where [Run] reads and writes. The zero value reads no standard
// input, logs nothing and writes to nowhere: give Write.
type Env struct {
	// Stdin is read when From is "-".
	Stdin io.Reader
	// Log receives the readers' warnings (nil: none).
	Log *slog.Logger
	// Write opens the output (Options.Output), calls fill with it and
	// closes it; an error from fill is returned. A caller that writes
	// files atomically removes a partial output when fill fails. Nil
	// writes to io.Discard.
	Write func(fill func(io.Writer) error) error
}

// ReadError is an error reading a trace that Run was given: the input of
// a derive or a file of lengths. FormatOption names the option that picks
// the trace's format ("from-format"), empty when there is none, so that a
// caller can say what to change.
type ReadError struct {
	FormatOption string
	Err          error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Run is `reprise synthesize` as a library call: it validates o, then
// derives (From set: row by row when [CanStream] allows, else in memory),
// generates agentic tasks (Tasks set) or generates sessions, row by row,
// into env.Write. It returns what was written for [Summary.Print].
//
// Errors: everything the options or the input caused matches
// [ErrSettings] (nothing was written); a failure to read a trace is a
// [*ReadError]; ctx's error when it ended the run; else the error of
// env.Write or of the run. Run is safe for concurrent use with distinct
// Envs.
func Run(ctx context.Context, o Options, env Env) (*Summary, error) {
	p, err := o.plan()
	if err != nil {
		return nil, err
	}
	if env.Write == nil {
		env.Write = func(fill func(io.Writer) error) error { return fill(io.Discard) }
	}
	out := &Summary{opts: o}
	switch {
	case p.agentic != nil:
		err = runAgentic(env, p, out)
	case p.derive != nil:
		var streamed bool
		var why string
		streamed, why, err = runDeriveStreamed(ctx, env, o, p, out)
		if err == nil && !streamed {
			err = runDeriveInMemory(ctx, env, o, p, out)
			out.inMemory = why
		}
	default:
		err = runGenerate(ctx, env, p, out)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// runAgentic generates agentic tasks and writes them.
func runAgentic(env Env, p *plan, out *Summary) error {
	res, err := GenerateAgentic(*p.agentic)
	if err != nil {
		return err
	}
	if err := env.Write(func(w io.Writer) error { return Write(w, res) }); err != nil {
		return err
	}
	out.rows, out.format = len(res.Rows), res.Format
	out.report = analyze.Rows(res.Rows, analyze.Config{BlockSize: res.BlockSize, CacheSizes: []int64{}})
	return nil
}

// runGenerate generates sessions row by row into the output.
func runGenerate(ctx context.Context, env Env, p *plan, out *Summary) error {
	if err := p.loadLengths(); err != nil {
		return &ReadError{Err: err}
	}
	g := p.generate
	out.format = g.Format
	var genErr error
	err := env.Write(func(w io.Writer) error {
		tw, err := trace.NewWriter(w, g.Format)
		if err != nil {
			return err
		}
		n := 0
		out.generate, genErr = GenerateTo(*g, func(r *trace.Row) error {
			if n++; n&0xfff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			return tw.Write(r)
		})
		if genErr != nil {
			return genErr
		}
		return tw.Flush()
	})
	if genErr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return genErr
	}
	if err != nil {
		return err
	}
	out.rows, out.report = out.generate.Rows, out.generate.Written
	return nil
}

// runDeriveInMemory reads the whole input, sorted by arrival, derives and
// writes the output.
func runDeriveInMemory(ctx context.Context, env Env, o Options, p *plan, out *Summary) error {
	rows, err := readTrace(ctx, env, o.From, p.readOpts)
	if err != nil {
		return &ReadError{FormatOption: "from-format", Err: err}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res, err := Derive(rows, *p.derive)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := env.Write(func(w io.Writer) error { return Write(w, res) }); err != nil {
		return err
	}
	out.rows, out.format, out.derive = len(res.Rows), res.Format, res.Derive
	if !o.Quiet {
		out.report = Measure(res.Rows, res.BlockSize, []int64{})
	}
	return nil
}

// runDeriveStreamed derives row by row when the settings and the input allow
// it (CanStream: a first pass that validates every row, as the in-memory
// read does): it reports false, and why, when they do not.
func runDeriveStreamed(ctx context.Context, env Env, o Options, p *plan, out *Summary) (bool, string, error) {
	opts := p.readOpts
	opts.Log, opts.Context = env.Log, ctx
	ok, why, err := CanStream(o.From, opts, *p.derive)
	if err != nil {
		if errors.Is(err, ErrSettings) {
			return false, "", err
		}
		return false, "", &ReadError{FormatOption: "from-format", Err: err}
	}
	if !ok {
		return false, why, nil
	}
	var an *analyze.Analyzer
	if !o.Quiet {
		an = analyze.New(analyze.Config{CacheSizes: []int64{}})
	}
	var derr error
	err = env.Write(func(w io.Writer) error {
		tw, err := trace.NewWriter(w, p.derive.Format)
		if err != nil {
			return err
		}
		n := 0
		out.derive, derr = DeriveTo(o.From, opts, *p.derive, func(r *trace.Row) error {
			if n++; n&0xfff == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if an != nil {
				an.Add(r)
			}
			return tw.Write(r)
		})
		if derr != nil {
			return derr
		}
		return tw.Flush()
	})
	if derr != nil {
		if ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		if errors.Is(derr, ErrSettings) {
			return false, "", derr
		}
		return false, "", &ReadError{FormatOption: "from-format", Err: derr}
	}
	if err != nil {
		return false, "", err
	}
	out.rows, out.format = out.derive.RowsOut, p.derive.Format
	if an != nil {
		out.report = an.Report()
	}
	return true, "", nil
}

// readTrace reads a whole trace, sorted by arrival, from a file or stdin
// (read once, straight into the rows: no copy of it is kept). Reading
// stops when ctx is done.
func readTrace(ctx context.Context, env Env, path string, opts trace.Options) ([]trace.Row, error) {
	opts.Log, opts.Context = env.Log, ctx
	if path != "-" {
		rows, _, err := trace.ReadAll(path, opts)
		return rows, err
	}
	r, err := trace.NewReader("-", env.Stdin, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rows, _, err := trace.ReadAllFrom(r)
	return rows, err
}

// loadLengths reads the traces of --isl-from and --osl-from; the same file
// for both gives joint (input, output) pairs.
func (p *plan) loadLengths() error {
	g := p.generate
	if p.lengthsISL == "" && p.lengthsOSL == "" {
		return nil
	}
	load := func(path string) ([][2]int, error) {
		return LoadLengths(path, trace.Options{DropFailed: true})
	}
	if p.lengthsISL != "" && p.lengthsISL == p.lengthsOSL {
		pairs, err := load(p.lengthsISL)
		if err != nil {
			return err
		}
		g.Lengths = pairs
		return nil
	}
	column := func(path string, i int) (Dist, error) {
		pairs, err := load(path)
		if err != nil {
			return Dist{}, err
		}
		v := make([]int, len(pairs))
		for j, pr := range pairs {
			v[j] = pr[i]
		}
		return Dist{Kind: DistEmpirical, Values: v}, nil
	}
	var err error
	if p.lengthsISL != "" {
		if g.ISL, err = column(p.lengthsISL, 0); err != nil {
			return err
		}
	}
	if p.lengthsOSL != "" {
		if g.OSL, err = column(p.lengthsOSL, 1); err != nil {
			return err
		}
	}
	return nil
}
