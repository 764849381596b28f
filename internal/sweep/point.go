package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

func (s *sweeper) status(p Point) PointStatus {
	seed := s.cfg.Base.Prompts.Seed
	if s.cfg.FreshPromptSeed {
		seed = DeriveSeed(seed, p.Name())
	}
	st := PointStatus{Name: p.Name(), Dir: filepath.Join(s.cfg.pointsDir(), p.Name()), Settings: map[string]float64{},
		PromptSeed: seed, Status: StatusPending}
	for i, n := range p.Names {
		st.Settings[n] = p.Values[i]
	}
	return st
}

// point measures one point (or reads it back when its directory is
// complete) and records its status and row.
func (s *sweeper) point(ctx context.Context, p Point, st *PointStatus) (*Row, error) {
	dir := filepath.Join(s.cfg.Dir, st.Dir)
	var done bool
	if s.cfg.Runs.multi() {
		done = repeatComplete(dir)
	} else {
		done = runComplete(dir)
	}
	if !done {
		if ctx.Err() != nil {
			s.res.Interrupted = true
			return nil, s.save()
		}
		if err := s.runPoint(ctx, p, st, dir); err != nil || s.res.Interrupted {
			if err != nil {
				st.Status, st.Reason = StatusFailed, err.Error()
			}
			return nil, errors.Join(err, s.save())
		}
	}
	var runs []*measured
	if s.cfg.Runs.multi() {
		rep, err := repeat(ctx, s.options(p, st, dir), dir, s.cfg.Runs, s.cfg.Stop.SaturationTolerance)
		if err != nil {
			return nil, err
		}
		runs = rep.measured
	} else {
		m, err := readRun(dir, s.cfg.Stop.SaturationTolerance)
		if err != nil {
			return nil, err
		}
		runs = []*measured{m}
	}
	row := newRow(p, runs, s.cfg.Base.MinGoodFraction, s.cfg.Runs.Level)
	row.Point = st.Name
	st.Status, st.Row = StatusDone, &row
	s.res.Rows = append(s.res.Rows, row)
	s.lastRuns = runs
	if p.Trial > 0 {
		s.addTrial(p, st, runs)
	}
	if s.cfg.Find == nil && s.cfg.Recipe == nil && s.cfg.Search == nil {
		s.line(&row, "")
	}
	return &row, nil
}

// options are the base options with the point's settings, directory and
// prompt seed.
func (s *sweeper) options(p Point, st *PointStatus, dir string) reprise.Options {
	o := s.cfg.Base
	p.Apply(&o)
	o.Prompts.Seed = st.PromptSeed
	if st.RequestCount > 0 {
		o.Replay.RequestCount = st.RequestCount
	}
	if st.DurationNS > 0 {
		o.Replay.Duration = time.Duration(st.DurationNS)
	}
	if st.WarmupRequests > 0 {
		o.Replay.WarmupRequests, o.Replay.WarmupDuration = st.WarmupRequests, 0
	}
	o.Output.Dir, o.Output.Overwrite = dir, true
	o.Progress = nil
	return o
}

// runPoint runs the before-point command and the point's run(s).
func (s *sweeper) runPoint(ctx context.Context, p Point, st *PointStatus, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The log is the sweep's own file: remove it so that Overwrite
	// finds only a run's files, and write it again after the run.
	logPath := filepath.Join(dir, BeforePointLog)
	if err := removeIfExists(logPath); err != nil {
		return err
	}
	var out []byte
	if s.cfg.BeforePoint != "" {
		var err error
		out, err = s.beforePoint(ctx, st.Name, dir)
		if err != nil {
			return errors.Join(err, s.keepLog(dir, logPath, out))
		}
	}
	o := s.options(p, st, dir)
	s.log.Info("sweep point", slog.String("point", st.Name), slog.String("dir", dir))
	if s.cfg.Runs.multi() {
		// repeat is called again by point to read the runs; here it runs
		// them (resuming a point's runs that completed).
		rep, err := repeat(ctx, o, dir, s.cfg.Runs, s.cfg.Stop.SaturationTolerance)
		if rep != nil && rep.Interrupted {
			st.Status, s.res.Interrupted = StatusInterrupted, true
		}
		return errors.Join(err, s.keepLog(dir, logPath, out))
	}
	res, err := reprise.Run(ctx, o)
	if res != nil && res.Interrupted {
		st.Status, s.res.Interrupted = StatusInterrupted, true
	}
	return errors.Join(err, s.keepLog(dir, logPath, out))
}

// keepLog writes the before-point output into the point's directory
// (after the run: a run directory is created empty).
func (s *sweeper) keepLog(dir, path string, out []byte) error {
	if s.cfg.BeforePoint == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// beforePoint runs Config.BeforePoint and returns its combined output
// (at most maxBeforePointOutput bytes).
func (s *sweeper) beforePoint(ctx context.Context, name, dir string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.cfg.BeforePoint)
	cmd.Env = append(os.Environ(), "REPRISE_POINT="+name, "REPRISE_POINT_DIR="+dir)
	var buf limitedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return buf.b, fmt.Errorf("before-point command for %s: %w (output in %s)", name, err, filepath.Join(dir, BeforePointLog))
	}
	return buf.b, nil
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxBeforePointOutput - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// save writes sweep.json.
func (s *sweeper) save() error {
	return writeJSON(filepath.Join(s.cfg.Dir, ManifestFile), &s.res.Manifest)
}

// probe runs one probe at the given settings and returns it (its
// validity judged by [validity]); try numbers repeated settings.
func (s *sweeper) probe(ctx context.Context, names []string, values []float64, why string, metricKeys []string) (*SearchProbe, error) {
	p := Point{Names: names, Values: values}
	if s.cfg.PointsDir == "." {
		p.Label = AIPerfLabel(p)
	}
	base := p.Name()
	k := 1
	for slices.ContainsFunc(s.res.Points, func(st PointStatus) bool { return st.Name == p.Name() }) {
		k++
		p.Label = base + "_" + tryName + "_" + strconv.Itoa(k)
	}
	st := s.status(p)
	st.RequestCount, st.WarmupRequests = s.probeLength(names, values)
	s.res.Points = append(s.res.Points, st)
	stp := &s.res.Points[len(s.res.Points)-1]
	row, err := s.point(ctx, p, stp)
	if err != nil || s.res.Interrupted {
		if err == nil {
			err = errInterrupted
		}
		return nil, err
	}
	pr := &SearchProbe{Point: st.Name, Settings: st.Settings, Why: why, Metrics: map[string]float64{}}
	for i, m := range s.lastRuns {
		open := replay.Mode(m.sum.Run.Mode) != replay.ModeConcurrency
		val := validity(m, open, 0, DefaultFindMinSentShare, s.cfg.Base.MinGoodFraction)
		if i == 0 || (!val.Valid && pr.Validity.Valid) {
			pr.Validity = val
		}
	}
	keys := append(slices.Clone(metricKeys), "output_token_throughput", "request_throughput", "error_rate")
	for _, key := range keys {
		sum, n := 0.0, 0
		for _, m := range s.lastRuns {
			if v, ok := summary.RunMetricValue(m.sum, key); ok {
				sum, n = sum+v, n+1
			}
		}
		if n > 0 {
			pr.Metrics[key] = sum / float64(n)
		}
	}
	if s.cfg.Base.Goodput != "" {
		pr.Metrics["goodput"] = row.Goodput
		pr.Metrics["good_request_fraction"] = row.GoodFraction
	}
	if err := s.save(); err != nil {
		return pr, err
	}
	return pr, nil
}

var errInterrupted = errors.New("interrupted")

// DefaultProbeRounds is R of a recipe's or search's probe-length rule
// ([sweeper.probeLength]).
const DefaultProbeRounds = 3

// probeLength is the measured and warmup request counts of a recipe's or
// a model-based search's probe at the settings given (0: the base's).
// A closed-loop probe at concurrency c must fill its c slots for several
// rounds, or it measures a lighter load than it is named for (10
// requests at concurrency 32 never have more than 10 in flight): with a
// MinRounds (no --request-count or --benchmark-duration given) it sends c
// warmup requests, the first wave, which finds the server idle, then
// MinRounds·c measured ones; given a --request-count N, it sends
// max(N, R·c) measured requests, R = DefaultProbeRounds, and at least c
// warmup requests when N was raised. A probe of a trace, or one that
// runs for a --benchmark-duration, keeps the base's length (a closed loop
// keeps its slots full for the whole duration).
func (s *sweeper) probeLength(names []string, values []float64) (count, warmup int) {
	o := &s.cfg.Base
	c, closed := max(o.Replay.Concurrency, 1), o.Replay.Mode == replay.ModeConcurrency
	if i := slices.Index(names, Concurrency); i >= 0 {
		c, closed = int(values[i]), true
	}
	if o.Trace.Path != "" || !closed {
		return 0, 0
	}
	rounds := 0
	switch {
	case s.cfg.Recipe != nil:
		rounds = s.cfg.Recipe.MinRounds
	case s.cfg.Search != nil:
		rounds = s.cfg.Search.MinRounds
	}
	if rounds > 0 {
		return rounds * c, c
	}
	if o.Replay.RequestCount == 0 || DefaultProbeRounds*c <= o.Replay.RequestCount {
		return 0, 0
	}
	return DefaultProbeRounds * c, max(o.Replay.WarmupRequests, c)
}
