package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
)

// app holds what every subcommand needs: the process streams and the logger
// configured from the root flags. Subcommand constructors take it and read
// a.log at action time (it is set by the root's Before hook).
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
}

// run is main without the process: it parses args, runs the selected
// command and returns the exit code. Tests call it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, log: slog.New(slog.DiscardHandler)}
	root := newRoot(a)
	err := root.Run(ctx, args)
	if err == nil {
		return exitcode.OK
	}
	if exitcode.Code(err) != exitcode.OK && err.Error() != "" {
		fmt.Fprintf(stderr, "reprise: %v\n", err)
		if h := exitcode.Hint(err); h != "" {
			fmt.Fprintf(stderr, "hint: %s\n", h)
		}
	}
	return exitcode.Code(err)
}

// newRoot builds the command tree. Every subcommand is constructed here and
// nowhere else, so there is no global registry.
func newRoot(a *app) *cli.Command {
	root := &cli.Command{
		Name:  "reprise",
		Usage: "replay LLM-serving traces against inference servers with microsecond timing",
		Description: "reprise fires every request of a production trace (Mooncake, Bailian, BurstGPT, Azure, ...)\n" +
			"at its intended time, builds prompts that reproduce the trace's prefix sharing, and records\n" +
			"TTFT, ITL, latency, goodput and its own schedule lateness in Parquet files.\n\n" +
			"Exit codes: 0 ok, 1 run error, 2 usage or config error, 3 SLO breach, 4 lateness budget.",
		Reader:                a.stdin,
		Writer:                a.stdout,
		ErrWriter:             a.stderr,
		HideVersion:           true,
		EnableShellCompletion: true,
		Suggest:               true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Aliases: []string{"V"}, Usage: "print the version, commit and Go version, then exit"},
			&cli.StringFlag{
				Name: "log-level", Value: "info", Usage: "log `LEVEL`: debug, info, warn or error",
				Sources: envVars("log-level"),
			},
			&cli.StringFlag{
				Name: "log-format", Value: "text", Usage: "log `FORMAT` on stderr: text or json",
				Sources: envVars("log-format"),
			},
		},
		Before: func(ctx context.Context, cmd *cli.Command) (context.Context, error) {
			l, err := newLogger(a.stderr, cmd.String("log-level"), cmd.String("log-format"))
			if err != nil {
				return ctx, exitcode.UsageError(err, "")
			}
			a.log = l
			return ctx, nil
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Bool("version") {
				fmt.Fprintln(a.stdout, versionString())
				return nil
			}
			if cmd.Args().Present() {
				return exitcode.Usagef("unknown command %q", cmd.Args().First())
			}
			return cli.ShowRootCommandHelp(cmd)
		},
		// Exit codes are mapped in run, never by os.Exit inside the library.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands:       commands(a),
	}
	setUsageErrors(root)
	return root
}

// setUsageErrors makes flag-parsing errors of every command exit with code 2
// and a pointer to the command's help.
func setUsageErrors(cmd *cli.Command) {
	cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
		return exitcode.UsageError(err, fmt.Sprintf("see '%s --help'", c.FullName()))
	}
	for _, sub := range cmd.Commands {
		setUsageErrors(sub)
	}
}

// newLogger builds the process logger. Logs go to stderr; stdout is data.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, errors.New("--log-format " + format + ": want text or json")
	}
}

// envVars returns the environment source for a flag: --max-inflight reads
// REPRISE_MAX_INFLIGHT.
func envVars(flag string) cli.ValueSourceChain {
	return cli.EnvVars("REPRISE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_")))
}
