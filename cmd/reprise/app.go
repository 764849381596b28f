package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/config"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/printable"
)

// app holds what every subcommand needs: the process streams and the logger
// configured from the root flags. Subcommand constructors take it and read
// a.log at action time (it is set by the root's Before hook).
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    *slog.Logger
	// abort is done when the run must stop at once (a second interrupt):
	// a replay then cancels its in-flight requests without waiting for
	// --grace and skips what it can do later from the files.
	abort context.Context
}

// run is main without the process: it parses args, runs the selected
// command and returns the exit code. Tests call it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runAbortable(ctx, context.Background(), args, stdin, stdout, stderr)
}

// runAbortable is run with an abort context (see app.abort).
func runAbortable(ctx, abort context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, log: slog.New(slog.DiscardHandler), abort: abort}
	root := newRoot(a)
	args, err := expandConfigArgs(root, args)
	if err == nil {
		err = root.Run(ctx, args)
	}
	if err == nil {
		return exitcode.OK
	}
	if envParseError(err) {
		err = exitcode.UsageError(err, "fix or unset the environment variable")
	}
	if name, ok := noHelpTopic(err); ok {
		err = exitcode.UsageError(fmt.Errorf("help: unknown command %q", name), "see 'reprise --help' for the commands")
	}
	if exitcode.Code(err) != exitcode.OK && err.Error() != "" {
		// An error may quote a server's message or a file's bytes.
		fmt.Fprintf(stderr, "reprise: %s\n", printable.Text(err.Error()))
		if h := exitcode.Hint(err); h != "" {
			fmt.Fprintf(stderr, "hint: %s\n", printable.Text(h))
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
			return groupAction(ctx, cmd)
		},
		// completion is listed in the help, as every other command.
		ConfigureShellCompletionCommand: func(c *cli.Command) {
			c.Hidden = false
			c.Usage = "print a shell completion script: bash, zsh, fish or pwsh (e.g. source <(reprise completion bash))"
			c.Action = groupAction
		},
		// Exit codes are mapped in run, never by os.Exit inside the library.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands:       commands(a),
	}
	setUsageErrors(root)
	return root
}

// setUsageErrors makes flag-parsing errors of every command exit with code 2
// and a pointer to the command's help; a command with a handler of its
// own (profile explains AIPerf's flags) keeps it. A command made of
// subcommands (adapters) gets groupAction. It also keeps every
// repeatable flag's values whole: the CLI library splits them on commas
// unless each command (the setting is not inherited, and it applies to
// environment variables too) says not to, and a header value
// ("Accept: text/event-stream, application/json"), a label or a JSON
// object holds commas. The flags documented as comma-separated split
// their own values (flagmap.CommaList).
//
// Every float flag without a check of its own refuses NaN and infinities
// as it is parsed (strconv reads "NaN", "Inf"; no comparison catches NaN
// later), from the command line or its variable.
func setUsageErrors(cmd *cli.Command) {
	if cmd.Action == nil && len(cmd.Commands) > 0 {
		cmd.Action = groupAction
	}
	cmd.DisableSliceFlagSeparator = true
	for _, f := range cmd.Flags {
		if ff, ok := f.(*cli.FloatFlag); ok && ff.Validator == nil {
			ff.Validator = finiteFloat
		}
	}
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = func(_ context.Context, c *cli.Command, err error, _ bool) error {
			return usageError(c, err)
		}
	}
	for _, sub := range cmd.Commands {
		setUsageErrors(sub)
	}
}

// groupAction is the action of a command made of subcommands (the root,
// adapters, completion): with no argument it prints the command's help;
// an argument that names none of its subcommands is a usage error (exit 2)
// that lists them and suggests the closest. (The CLI library's own
// answer is "No help topic for 'x'" and exit 1.)
func groupAction(_ context.Context, cmd *cli.Command) error {
	if !cmd.Args().Present() {
		if cmd.Root() == cmd {
			return cli.ShowRootCommandHelp(cmd)
		}
		return cli.ShowSubcommandHelp(cmd)
	}
	name := cmd.Args().First()
	var names []string
	for _, sub := range cmd.VisibleCommands() {
		if sub.Name != "help" {
			names = append(names, sub.Name)
		}
	}
	hint := fmt.Sprintf("'%s' has the commands %s; see '%s --help'", cmd.FullName(), strings.Join(names, ", "), cmd.FullName())
	if s := config.Closest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean '%s %s'? %s", cmd.FullName(), s, hint)
	}
	if cmd.Root() == cmd {
		return exitcode.UsageError(fmt.Errorf("unknown command %q", name), hint)
	}
	return exitcode.UsageError(fmt.Errorf("unknown command %q for '%s'", name, cmd.FullName()), hint)
}

// finiteFloat is the check of every float flag: a finite number.
func finiteFloat(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%v is not a finite number", v)
	}
	return nil
}

// The CLI library's flag errors, which usageError rewrites.
const unknownFlagPrefix = "flag provided but not defined: -"

var invalidValue = regexp.MustCompile(`(?s)^invalid value ("(?:[^"\\]|\\.)*") for flag -(\S+): (.*)$`)

// usageError turns a flag-parsing error of c into a usage error (exit 2)
// in reprise's words, with a hint: "flag provided but not defined: -urll"
// becomes "unknown flag --urll" and suggests --url; "invalid value "5" for
// flag -timeout: time: missing unit in duration "5"" becomes
// "--timeout "5": want a duration with a unit, e.g. 500ms, 10s or 2m".
func usageError(c *cli.Command, err error) error {
	hint := fmt.Sprintf("see '%s --help'", c.FullName())
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, unknownFlagPrefix); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		for _, f := range c.Flags {
			names = append(names, f.Names()...)
		}
		if s := config.Closest(name, names); s != "" {
			hint = fmt.Sprintf("did you mean %s? %s", dashed(s), hint)
		}
		return exitcode.UsageError(fmt.Errorf("unknown flag %s", dashed(name)), hint)
	}
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		value, flag, reason := m[1], dashed(m[2]), m[3]
		switch {
		case strings.HasPrefix(reason, flag+" "):
			// A Validator's message already names the flag and the value.
			return exitcode.UsageError(errors.New(reason), hint)
		case strings.HasPrefix(reason, "time: "):
			reason = "want a duration with a unit, e.g. 500ms, 10s or 2m"
		case strings.Contains(reason, "strconv.ParseFloat"):
			reason = "want a number"
		case strings.Contains(reason, "strconv.ParseInt"), strings.Contains(reason, "strconv.ParseUint"):
			reason = "want a whole number"
		case reason == "parse error": // a boolean flag's
			reason = "want true or false"
		}
		return exitcode.UsageError(fmt.Errorf("%s %s: %s", flag, value, reason), hint)
	}
	return exitcode.UsageError(err, hint)
}

// envParseError reports whether err is the CLI library's error for a flag
// value from the environment that does not parse ("could not parse "5" as
// time.Duration value from environment variable "REPRISE_TIMEOUT" ..."):
// a configuration error, so exit 2.
func envParseError(err error) bool {
	if err == nil || exitcode.Code(err) != exitcode.RunError {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "could not parse ") && strings.Contains(msg, " from environment variable ")
}

// noHelpTopic reports whether err is the CLI library's answer to `help
// NAME` for a NAME that is no command ("No help topic for 'NAME'"), and
// returns NAME: a usage error (exit 2), not the library's exit 3.
func noHelpTopic(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "No help topic for '")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "'")
	return name, true
}

// dashed writes a flag name as it is typed: -m, --url.
func dashed(name string) string {
	if utf8.RuneCountInString(name) == 1 {
		return "-" + name
	}
	return "--" + name
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
func envVars(flag string) cli.ValueSourceChain { return envVar("REPRISE_", flag) }

// mockEnv and synthEnv name the variables of mock-server's and
// synthesize's flags, REPRISE_MOCK_<FLAG> and REPRISE_SYNTH_<FLAG>: their
// --model, --seed, --block-size, --speedup, --output… configure a server
// or a trace generator, not the replay the same REPRISE_<FLAG> configures
// (a shared REPRISE_SPEEDUP would speed `synthesize | replay -` up twice).
func mockEnv(flag string) cli.ValueSourceChain  { return envVar("REPRISE_MOCK_", flag) }
func synthEnv(flag string) cli.ValueSourceChain { return envVar("REPRISE_SYNTH_", flag) }

func envVar(prefix, flag string) cli.ValueSourceChain {
	return cli.EnvVars(prefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_")))
}
