package selftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/oracle"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/selftest/calibration"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
)

// Defaults of [Config], as [NewConfig] sets them.
const (
	// DefaultStreams is the largest closed-loop load tried.
	DefaultStreams = 512
	// DefaultFirstStreams is the first step's load: each further step
	// doubles it, up to Streams.
	DefaultFirstStreams = 8
	// DefaultTTFT and DefaultITL are the mock server's latency model.
	DefaultTTFT = 20 * time.Millisecond
	DefaultITL  = 10 * time.Millisecond
	// DefaultISL and DefaultOSL are each request's lengths in tokens.
	DefaultISL = 128
	DefaultOSL = 64
	// DefaultMaxError is the bound on the p99 of the TTFT, ITL and E2E
	// errors that makes a load safe.
	DefaultMaxError = time.Millisecond
	// DefaultStepDuration is how long a step of a rate or trace load
	// sends (a closed-loop step runs three rounds of its streams).
	DefaultStepDuration = 2 * time.Second
	// DefaultNice is the client's nice value in the co-located case's
	// second run.
	DefaultNice = -20
	// DefaultServerNice is the server's nice value in that run when the
	// client may not lower its own.
	DefaultServerNice = 10
)

// Config configures a selftest. Build it with [NewConfig].
type Config struct {
	// Server is the command line that runs the mock server, e.g. the
	// running reprise binary and "mock-server"; selftest appends the
	// server's flags.
	Server []string
	// Streams is the largest closed-loop load (concurrent streams); the
	// steps double from FirstStreams up to it.
	Streams, FirstStreams int
	// Rate, when > 0, steps an open-loop request rate (Poisson arrivals)
	// up to Rate requests/s instead, from Rate/32.
	Rate float64
	// Trace, when not empty, replays this trace instead (its own
	// timestamps, rows' lengths), at speedups doubling up to Speedup from
	// Speedup/8.
	Trace   string
	Speedup float64
	// TTFT and ITL are the mock server's latency model; ISL and OSL the
	// requests' lengths in tokens (OSL also for trace rows without one).
	TTFT, ITL time.Duration
	ISL, OSL  int
	// MaxError is the bound on the errors' p99.
	MaxError time.Duration
	// StepDuration is how long a rate or trace step sends.
	StepDuration time.Duration
	// CoLocated measures the case of a server under test on the same
	// machine (a mock server that burns CPU), with the client as it runs
	// and with a nice value that favours it.
	CoLocated bool
	// Dir holds the steps' run directories and the server's logs; empty
	// uses a temporary directory removed at the end.
	Dir string
	// Progress, when not nil, gets a line per step as it ends.
	Progress io.Writer
}

// NewConfig returns a Config with the documented defaults: closed-loop
// streams from 8 to 512, TTFT 20 ms, ITL 10 ms, 128 input and 64 output
// tokens, a 1 ms bound and the co-located case.
func NewConfig() Config {
	return Config{Streams: DefaultStreams, FirstStreams: DefaultFirstStreams, TTFT: DefaultTTFT, ITL: DefaultITL,
		ISL: DefaultISL, OSL: DefaultOSL, MaxError: DefaultMaxError, StepDuration: DefaultStepDuration, Speedup: 1,
		CoLocated: true}
}

// Result is a selftest's outcome: the calibration file it makes, and how
// long it took.
type Result struct {
	File *calibration.File
	Took time.Duration
}

// kind is what the steps vary.
func (c *Config) kind() string {
	switch {
	case c.Trace != "":
		return "trace"
	case c.Rate > 0:
		return "rate"
	}
	return "streams"
}

// levels are the steps' settings, smallest first.
func (c *Config) levels() []float64 {
	var top, first float64
	switch c.kind() {
	case "trace":
		top, first = c.Speedup, c.Speedup/8
	case "rate":
		top, first = c.Rate, c.Rate/32
	default:
		top, first = float64(c.Streams), float64(min(c.FirstStreams, c.Streams))
	}
	var out []float64
	for l := first; l < top; l *= 2 {
		out = append(out, l)
	}
	return append(out, top)
}

// Validate reports every problem of c at once, naming its fields.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Server) == 0 {
		errs = append(errs, errors.New("Server is empty: want the command that runs `reprise mock-server`"))
	}
	if c.kind() == "streams" && (c.Streams < 1 || c.FirstStreams < 1) {
		errs = append(errs, fmt.Errorf("Streams %d, FirstStreams %d: want at least 1", c.Streams, c.FirstStreams))
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		errs = append(errs, fmt.Errorf("Rate %v: want a positive number of requests/s, or 0 for streams", c.Rate))
	}
	if c.Trace != "" && !(c.Speedup > 0) {
		errs = append(errs, fmt.Errorf("Speedup %v: want a positive number", c.Speedup))
	}
	if c.TTFT < 0 || c.ITL < 0 {
		errs = append(errs, fmt.Errorf("TTFT %v, ITL %v: must not be negative", c.TTFT, c.ITL))
	}
	if c.ISL < 1 || c.OSL < 2 {
		errs = append(errs, fmt.Errorf("ISL %d, OSL %d: want at least 1 input and 2 output tokens (a gap between tokens needs two)", c.ISL, c.OSL))
	}
	if c.MaxError <= 0 {
		errs = append(errs, fmt.Errorf("MaxError %v: must be positive", c.MaxError))
	}
	if c.StepDuration <= 0 {
		errs = append(errs, fmt.Errorf("StepDuration %v: must be positive", c.StepDuration))
	}
	return errors.Join(errs...)
}

// Run measures this machine: it starts the mock server in a child
// process, replays the stepped load against it with [reprise.Run] until
// a step's errors pass MaxError, and compares every client timestamp with
// the server's oracle log. Then, with CoLocated, it measures the safe load
// (or the first step, when none was safe) against a server that burns the
// CPU. It returns the calibration file it measured (not yet written).
func Run(ctx context.Context, c Config) (*Result, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	begin := time.Now()
	dir := c.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "reprise-selftest-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	pf := replay.Preflight(replay.DefaultPreflight)
	f := &calibration.File{Version: calibration.Version, Host: hostinfo.Describe(), Created: time.Now().UTC(),
		RepriseVersion: reprise.Version(), MaxErrorMS: ms(c.MaxError),
		Settings: calibration.Settings{Kind: c.kind(), TTFTMS: ms(c.TTFT), ITLMS: ms(c.ITL), ISL: c.ISL, OSL: c.OSL},
		Timer:    calibration.Timer{Primitive: pf.Primitive, P50MS: ms(pf.P50), P99MS: ms(pf.P99), MaxMS: ms(pf.Max)}}
	switch c.kind() {
	case "trace":
		f.Settings.Trace, f.Settings.Speedup = c.Trace, c.Speedup
	case "rate":
		f.Settings.Rate = c.Rate
	default:
		f.Settings.Streams = c.Streams
	}
	levels := c.levels()
	seqs := 4096
	if c.kind() == "streams" {
		seqs = max(c.Streams, 1)
	}
	srv, err := startServer(ctx, c.Server, filepath.Join(dir, "server"), serverSettings{TTFT: c.TTFT, ITL: c.ITL, MaxNumSeqs: seqs})
	if err != nil {
		return nil, err
	}
	safe := -1
	for i, l := range levels {
		st, err := c.step(ctx, srv, filepath.Join(dir, fmt.Sprintf("step-%02d", i)), l)
		if err != nil {
			srv.stop()
			return nil, err
		}
		f.Steps = append(f.Steps, st)
		c.progress(&st)
		if !st.Within {
			break
		}
		safe = i
	}
	srv.stop()
	if safe >= 0 {
		s := f.Steps[safe]
		f.SafeLevel, f.SafeLoad, f.SafeErrors = s.Level, &s.Load, s.Errors
	}
	f.Limit = diagnose(f, &c)
	if c.CoLocated {
		lvl := levels[max(safe, 0)]
		co, err := c.coLocated(ctx, dir, lvl, &f.Steps[max(safe, 0)], seqs)
		if err != nil {
			return nil, err
		}
		f.CoLocated = co
	}
	return &Result{File: f, Took: time.Since(begin)}, nil
}

func (c *Config) progress(st *calibration.Step) {
	if c.Progress == nil {
		return
	}
	verdict := "within"
	if !st.Within {
		verdict = "OVER the bound"
	}
	fmt.Fprintf(c.Progress, "  %s %-6s TTFT error p99 %.3f ms, ITL %.3f ms, E2E %.3f ms: %s\n", c.kind(), levelText(c.kind(), st.Level),
		st.Errors[calibration.TTFT].P99, st.Errors[calibration.ITL].P99, st.Errors[calibration.E2E].P99, verdict)
}

// coLocated measures level against a server that burns, per token, the
// CPU that makes it want every core of the machine at the events/s the
// step measured: first with the client as it is, then with the client at
// nice −20 or, where it may not lower its nice value, the server at 10.
func (c *Config) coLocated(ctx context.Context, dir string, level float64, at *calibration.Step, seqs int) (*calibration.CoLocated, error) {
	evps := at.Load.EventsPerSec
	if evps <= 0 {
		evps = at.Load.RequestsPerSec
	}
	work := 100 * time.Microsecond
	if evps > 0 {
		work = time.Duration(0.9 * float64(runtime.NumCPU()) / evps * 1e9)
	}
	work = min(max(work, 5*time.Microsecond), 5*time.Millisecond)
	co := &calibration.CoLocated{CPUPerTokenUS: float64(work) / 1e3}
	run := func(name string, serverNice *int) (calibration.Step, error) {
		srv, err := startServer(ctx, c.Server, filepath.Join(dir, name+"-server"),
			serverSettings{TTFT: c.TTFT, ITL: c.ITL, MaxNumSeqs: seqs, CPUPerToken: work, Nice: serverNice})
		if err != nil {
			return calibration.Step{}, err
		}
		defer srv.stop()
		return c.step(ctx, srv, filepath.Join(dir, name), level)
	}
	var err error
	if co.Default, err = run("co-located", nil); err != nil {
		return nil, err
	}
	have, herr := prio.Nice()
	if herr == nil && prio.SetNice(DefaultNice) == nil {
		// The child would inherit the nice value of the thread that
		// starts it: the server stays where the client was.
		co.NiceHow = fmt.Sprintf("client at nice %d", DefaultNice)
		co.Niced, err = run("co-located-niced", &have)
		_ = prio.SetNice(have) // raising it back is always allowed
	} else {
		n := DefaultServerNice
		co.NiceHow = fmt.Sprintf("server at nice %d (this user may not lower the client's nice value)", n)
		co.Niced, err = run("co-located-niced", &n)
	}
	if err != nil {
		return nil, err
	}
	return co, nil
}

// options are the replay of one step.
func (c *Config) options(url, dir string, level float64) reprise.Options {
	o := reprise.NewOptions()
	o.URL, o.Model = url, mockserver.DefaultModel
	o.Synthetic = reprise.SyntheticLoad{ISL: float64(c.ISL), OSL: float64(c.OSL)}
	o.Telemetry.EndpointMetrics = false
	o.MaxErrorRate = 1 // failures are counted as problems of the step
	o.Output.Dir = dir
	rc := &o.Replay
	rc.Grace = 5 * time.Second
	switch c.kind() {
	case "trace":
		// The trace gives the lengths; OSL is only for its rows without one.
		o.Trace.Path, o.Synthetic = c.Trace, reprise.SyntheticLoad{OSL: float64(c.OSL)}
		rc.Speedup, rc.Duration, rc.WarmupDuration = level, c.StepDuration, c.StepDuration/4
	case "rate":
		rc.RequestRate, rc.Duration, rc.WarmupDuration = level, c.StepDuration, c.StepDuration/4
	default:
		// As BenchmarkTTFTError: the streams ramp up, and the ramp and
		// one request's time after it are warmup (every stream has then
		// started and ended a request); then each stream runs two
		// measured requests at full concurrency, or as many as fill a
		// second when requests are short, so that the ragged end of the
		// last round is a small part of the measured time (the load is
		// computed over it, as a long replay's is).
		n := int(level)
		d := c.TTFT + time.Duration(c.OSL-1)*c.ITL
		rounds := 2
		if d > 0 {
			rounds = max(rounds, int(math.Ceil(float64(time.Second)/float64(d))))
		}
		rc.Concurrency, rc.RequestCount = n, rounds*n
		rc.ConcurrencyRamp = min(500*time.Millisecond, d)
		rc.WarmupDuration = rc.ConcurrencyRamp + d
	}
	return o
}

// step replays one level and compares it with the server's log.
func (c *Config) step(ctx context.Context, srv *server, dir string, level float64) (calibration.Step, error) {
	st := calibration.Step{Level: level}
	o := c.options(srv.url, dir, level)
	var cpu0 syscall.Rusage
	var srv0 time.Duration
	var wall0 time.Time
	o.OnStart = func(reprise.Start) {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
		srv0, _ = srv.cpu()
		wall0 = time.Now()
	}
	var cpu1 syscall.Rusage
	var srv1 time.Duration
	var srvOK bool
	var wall time.Duration
	o.OnEnd = func() {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
		srv1, srvOK = srv.cpu()
		wall = time.Since(wall0)
	}
	res, err := reprise.Run(ctx, o)
	if err != nil {
		return st, fmt.Errorf("selftest step %s %s: %w", c.kind(), levelText(c.kind(), level), err)
	}
	run, err := arrowio.Open(res.Dir)
	if err != nil {
		return st, err
	}
	var all, measured []record.Request
	sent, events := 0, int64(0)
	for r, err := range run.Requests() {
		if err != nil {
			return st, err
		}
		all = append(all, r)
		if r.SentNS != 0 {
			sent++
		}
		events += int64(r.Events)
		if r.Phase != record.PhaseWarmup {
			measured = append(measured, r)
		}
	}
	log, err := srv.next(sent)
	if err != nil {
		return st, err
	}
	e, problems := oracle.Compare(measured, log)
	st.Requests, st.Problems = len(measured), len(problems)
	st.Errors = map[string]summary.ErrorBar{
		calibration.TTFT: {P50: e.First.P50, P99: e.First.P99},
		calibration.ITL:  {P50: e.ITL.P50, P99: e.ITL.P99},
		calibration.E2E:  {P50: e.Last.P50, P99: e.Last.P99},
	}
	s := res.Summary
	st.Load = summary.LoadOf(s)
	if e := s.Metrics["request_latency"]; c.kind() == "streams" && e != nil && e.Avg > 0 && s.RequestCount > 0 {
		// A closed loop has its level in flight: Little's law then gives
		// the rates a long replay at this level reaches, which the few
		// rounds of a step, ragged at their end, understate.
		st.Load.Streams = level
		st.Load.RequestsPerSec = level / (e.Avg / 1e3)
		if s.Options.Streaming {
			st.Load.EventsPerSec = st.Load.RequestsPerSec * float64(s.TotalOSL) / float64(s.RequestCount)
		}
	}
	if m := s.Metrics["schedule_lateness"]; m != nil {
		st.LatenessP99MS = m.P99
	}
	if m := s.Metrics["client_read_lag"]; m != nil {
		st.ReadLagP99MS = m.P99
	}
	var late []float64
	for i := range log {
		for _, ev := range log[i].Events {
			if ev.DueNS > 0 && (ev.Kind == mockserver.EventContent || ev.Kind == mockserver.EventReasoning) {
				late = append(late, float64(ev.TimeNS-ev.DueNS)/1e6)
			}
		}
	}
	st.ServerLatenessP99MS = summary.Compute(late).P99
	user := time.Duration(cpu1.Utime.Nano() - cpu0.Utime.Nano())
	sys := time.Duration(cpu1.Stime.Nano() - cpu0.Stime.Nano())
	if events > 0 {
		st.ClientCPUPerEventUS = float64(user+sys) / 1e3 / float64(events)
	}
	if len(all) > 0 {
		st.ClientCPUPerRequestUS = float64(user+sys) / 1e3 / float64(len(all))
	}
	if user+sys > 0 {
		st.SysShare = float64(sys) / float64(user+sys)
	}
	if wall > 0 {
		st.ClientCores = float64(user+sys) / float64(wall)
		if srvOK {
			st.ServerCores = float64(srv1-srv0) / float64(wall)
		}
	}
	st.Quality = s.Quality().Verdict
	bound := ms(c.MaxError)
	st.Within = st.Problems == 0 && e.Joined > 0 && !slices.ContainsFunc(calibration.Tags, func(t string) bool { return st.Errors[t].P99 > bound })
	return st, nil
}

// diagnose says what limits the machine, from the first step over the
// bound (the last step when none was).
func diagnose(f *calibration.File, c *Config) calibration.Limit {
	if len(f.Steps) == 0 {
		return calibration.Limit{Kind: "none", Advice: []string{}}
	}
	st := f.Steps[len(f.Steps)-1]
	cpus := float64(f.Host.CPUs)
	if st.Within {
		what := map[string]string{"streams": "--streams", "rate": "--rate", "trace": "--speedup"}[c.kind()]
		return calibration.Limit{Kind: "none",
			Detail: fmt.Sprintf("every step stayed within ±%.3g ms, up to the largest asked (%s %s)", f.MaxErrorMS, c.kind(), levelText(c.kind(), st.Level)),
			Advice: []string{fmt.Sprintf("raise %s to look further", what)}}
	}
	if st.Problems > 0 && st.Problems*10 >= st.Requests {
		return calibration.Limit{Kind: "errors",
			Detail: fmt.Sprintf("%d of %d requests failed or disagreed with the server's log at %s %s", st.Problems, st.Requests, c.kind(), levelText(c.kind(), st.Level)),
			Advice: []string{"look at the step's records (--dir keeps them): a client or server limit (open files, ports) was reached"}}
	}
	switch used := st.ClientCores + st.ServerCores; {
	case cpus > 0 && used >= 0.8*cpus:
		return calibration.Limit{Kind: "cpu",
			Detail: fmt.Sprintf("CPU: client and server together used %.2g of the %d cores (client %.2g, %.3g µs per event)", used, f.Host.CPUs, st.ClientCores, st.ClientCPUPerEventUS),
			Advice: []string{
				"give the client the CPU first: reprise replay --nice -20 (as root or with CAP_SYS_NICE), or start the server under test with a higher nice value",
				"give each client fewer streams: split the load over shards (--shard i/N) on more machines",
			}}
	case f.Timer.P50MS > f.MaxErrorMS/4:
		// A timer late at its median is coarse; one late only at p99 is
		// a machine busy with other work (the case below).
		return calibration.Limit{Kind: "timer",
			Detail: fmt.Sprintf("timer: the kernel wakes reprise %.3g ms late at p50 (%s)", f.Timer.P50MS, f.Timer.Primitive),
			Advice: []string{"use a machine or kernel with high-resolution timers (a VM's timer is often the limit); check host.clock_source in a run's manifest"}}
	case st.SysShare >= 0.6:
		return calibration.Limit{Kind: "loopback",
			Detail: fmt.Sprintf("loopback: %.0f %% of the client's CPU was the kernel's (TCP on loopback, %.3g µs per event)", st.SysShare*100, st.ClientCPUPerEventUS),
			Advice: []string{"give each client fewer streams: split the load over shards (--shard i/N) on more machines"}}
	}
	return calibration.Limit{Kind: "scheduling",
		Detail: fmt.Sprintf("scheduling: the client fell behind (read lag p99 %.3g ms; the timer woke %.3g ms late at p99) while this test used only %.2g of the %d cores: other processes competed for them",
			st.ReadLagP99MS, f.Timer.P99MS, st.ClientCores+st.ServerCores, f.Host.CPUs),
		Advice: []string{"run on a quieter machine, or give the client the CPU first: reprise replay --nice -20 (as root or with CAP_SYS_NICE)"}}
}

func levelText(kind string, l float64) string {
	switch kind {
	case "rate":
		return fmt.Sprintf("%.4g/s", l)
	case "trace":
		return fmt.Sprintf("×%.4g", l)
	}
	return fmt.Sprintf("%d", int(l))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
