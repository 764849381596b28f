package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/selftest"
	"github.com/reprise-bench/reprise/selftest/calibration"
)

// selfServer returns the command line that runs this binary's mock
// server (tests replace it: their binary is not reprise).
var selfServer = func() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "mock-server"}, nil
}

// selftestCommand is `reprise selftest`: how precisely this machine times
// responses, and up to what load.
func selftestCommand(a *app) *cli.Command {
	d := selftest.NewConfig()
	return &cli.Command{
		Name:  "selftest",
		Usage: "measure how precisely this machine times LLM responses, and up to what load; write a calibration",
		Description: "Starts the mock server in a child process and replays a load against it, doubling it step by\n" +
			"step (closed-loop streams by default; --rate for an open loop, --trace for your own trace), and\n" +
			"compares every client timestamp with the server's own log of when it wrote each token. Prints the\n" +
			"TTFT, ITL and end-to-end errors (p50/p99), schedule lateness, read lag and client CPU of each step,\n" +
			"the largest load whose p99 errors stay within --max-error, what limits the machine, and what a\n" +
			"server burning CPU on the same machine does to the errors, with and without a nice value that\n" +
			"favours the client. Writes a calibration file that reprise replay on this host applies.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "streams", Value: d.Streams, Sources: envVars("streams"), Usage: "the largest closed-loop load, in concurrent streams (`N`)"},
			&cli.IntFlag{Name: "first-streams", Value: d.FirstStreams, Sources: envVars("first-streams"), Usage: "the first step's streams (`N`); each step doubles it"},
			&cli.FloatFlag{Name: "rate", Sources: envVars("rate"), Usage: "step an open-loop request rate up to `R` requests/s (from R/32) instead of streams"},
			&cli.StringFlag{Name: "trace", Sources: envVars("trace"), Usage: "replay trace `FILE` (its timestamps and lengths) at speedups up to --speedup (from a 1/8 of it)"},
			&cli.FloatFlag{Name: "speedup", Value: d.Speedup, Sources: envVars("speedup"), Usage: "the largest speedup `X` of --trace"},
			&cli.DurationFlag{Name: "ttft", Value: d.TTFT, Sources: envVars("ttft"), Usage: "the mock server's time to first token (`DURATION`)"},
			&cli.DurationFlag{Name: "itl", Value: d.ITL, Sources: envVars("itl"), Usage: "the mock server's inter-token latency (`DURATION`)"},
			&cli.IntFlag{Name: "isl", Value: d.ISL, Sources: envVars("isl"), Usage: "input tokens per request (`N`)"},
			&cli.IntFlag{Name: "osl", Value: d.OSL, Sources: envVars("osl"), Usage: "output tokens per request (`N`; trace rows without one)"},
			&cli.DurationFlag{Name: "max-error", Value: d.MaxError, Sources: envVars("max-error"), Usage: "a load is safe while the p99 TTFT, ITL and E2E errors stay within `DURATION`"},
			&cli.DurationFlag{Name: "step-duration", Value: d.StepDuration, Sources: envVars("step-duration"), Usage: "how long a --rate or --trace step sends (`DURATION`)"},
			&cli.BoolFlag{Name: "no-co-located", Sources: envVars("no-co-located"), Usage: "skip the case of a server that burns CPU on the same machine"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Sources: envVars("selftest-output"), Usage: "write the calibration to `FILE` (default: this host's, in the user cache directory)"},
			&cli.StringFlag{Name: "dir", Sources: envVars("selftest-dir"), Usage: "keep the steps' run directories and the server's logs in `DIR` (default: a temporary one, removed)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return exitcode.UsageError(fmt.Errorf("unexpected argument %q", cmd.Args().First()), "see 'reprise selftest --help'")
			}
			c, path, err := selftestConfig(a, cmd)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "reprise selftest: measuring this machine (%s; about half a minute)…\n", selftestPlan(&c))
			res, err := selftest.Run(ctx, c)
			if err != nil {
				if ctx.Err() != nil {
					return &exitcode.Error{Code: exitcode.RunError, Err: fmt.Errorf("selftest interrupted: %w", err)}
				}
				return exitcode.UsageError(err, "see 'reprise selftest --help'")
			}
			if err := res.File.Write(path); err != nil {
				return fmt.Errorf("write the calibration: %w", err)
			}
			if err := selftest.WriteReport(a.stdout, res.File, path); err != nil {
				return err
			}
			if n := autoNote(path); n != "" {
				fmt.Fprintln(a.stderr, n)
			}
			fmt.Fprintf(a.stderr, "reprise selftest: done in %v\n", res.Took.Round(100*time.Millisecond))
			return nil
		},
	}
}

// autoNote says, for a calibration written to path, that `replay
// --calibration auto` will not find it when path is not the file auto
// reads (calibration.DefaultPath, in the user's cache directory), and
// how to apply it; empty when auto reads path.
func autoNote(path string) string {
	def, err := calibration.DefaultPath()
	if err != nil {
		return fmt.Sprintf("reprise selftest: note: replay --calibration auto finds no calibration here (%v); apply this one with --calibration %s", err, path)
	}
	if a, err := filepath.Abs(path); err == nil && a == filepath.Clean(def) {
		return ""
	}
	return fmt.Sprintf("reprise selftest: note: replay --calibration auto reads only %s, not this file; apply it with --calibration %s", def, path)
}

// selftestFlag spells selftest.Config's fields as the command's flags.
var selftestFlag = map[string]string{"Streams": "--streams", "FirstStreams": "--first-streams", "Rate": "--rate",
	"Speedup": "--speedup", "TTFT": "--ttft", "ITL": "--itl", "ISL": "--isl", "OSL": "--osl", "MaxError": "--max-error",
	"StepDuration": "--step-duration"}

var selftestFields = regexp.MustCompile(`\b(FirstStreams|Streams|Rate|Speedup|TTFT|ITL|ISL|OSL|MaxError|StepDuration)\b`)

// selftestPlan says in a few words what the steps are.
func selftestPlan(c *selftest.Config) string {
	switch {
	case c.Trace != "":
		return fmt.Sprintf("%s up to ×%g", c.Trace, c.Speedup)
	case c.Rate > 0:
		return fmt.Sprintf("up to %g requests/s", c.Rate)
	}
	return fmt.Sprintf("%d to %d streams", min(c.FirstStreams, c.Streams), c.Streams)
}

// selftestConfig copies the selftest flags into a validated
// selftest.Config and the calibration file's path (--output, else the
// default); its errors are the command's.
func selftestConfig(a *app, cmd *cli.Command) (selftest.Config, string, error) {
	c := selftest.NewConfig()
	c.Streams, c.FirstStreams, c.Rate = cmd.Int("streams"), cmd.Int("first-streams"), cmd.Float("rate")
	c.Trace, c.Speedup = cmd.String("trace"), cmd.Float("speedup")
	c.TTFT, c.ITL, c.ISL, c.OSL = cmd.Duration("ttft"), cmd.Duration("itl"), cmd.Int("isl"), cmd.Int("osl")
	c.MaxError, c.StepDuration = cmd.Duration("max-error"), cmd.Duration("step-duration")
	c.CoLocated = !cmd.Bool("no-co-located")
	c.Dir = cmd.String("dir")
	c.Progress = a.stderr
	if c.Trace != "" {
		if _, err := os.Stat(c.Trace); err != nil {
			return c, "", exitcode.UsageError(fmt.Errorf("--trace: %w", err), "give a trace file reprise replay reads")
		}
	}
	path := cmd.String("output")
	if path == "" {
		p, err := calibration.DefaultPath()
		if err != nil {
			return c, "", exitcode.UsageError(fmt.Errorf("no user cache directory for the calibration: %w", err), "give --output FILE")
		}
		path = p
	}
	srv, err := selfServer()
	if err != nil {
		return c, "", fmt.Errorf("selftest: the mock server's command: %w", err)
	}
	c.Server = srv
	if err := c.Validate(); err != nil {
		return c, "", exitcode.UsageError(errors.New(selftestFields.ReplaceAllStringFunc(err.Error(), func(f string) string {
			return selftestFlag[f]
		})), "see 'reprise selftest --help'")
	}
	return c, path, nil
}
