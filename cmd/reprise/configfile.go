package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/config"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/sweep"
)

// configCommands are the commands that take -f/--config.
var configCommands = []string{"profile", "replay", "sweep"}

// configHint is the hint of every config file error.
const configHint = "see docs/format/config.md (reprise config init writes a starting file)"

// configFlag is -f/--config of profile, replay and sweep. Its files are
// read before the command line is parsed (expandConfigArgs); the flag is
// declared so that help lists it.
func configFlag(keys string) cli.Flag {
	return &cli.StringSliceFlag{Name: "config", Aliases: []string{"f"}, Category: "Config file",
		Usage: "read flags from the YAML `FILE` (" + keys + "); flags on the command line override it, a later file an earlier one (docs/format/config.md)"}
}

// expandConfigArgs replaces the -f/--config FILE arguments of a profile,
// replay or sweep command line by the flags the files set, placed before
// the command line's own, so that one flag table serves both; a flag the
// command line sets drops the files' values of it (repeatable flags
// included). Other command lines are returned as they are.
func expandConfigArgs(root *cli.Command, args []string) ([]string, error) {
	i := 1
	for i < len(args) {
		tok := args[i]
		if tok == "--log-level" || tok == "--log-format" || tok == "-log-level" || tok == "-log-format" {
			i += 2
			continue
		}
		if strings.HasPrefix(tok, "-") {
			i++
			continue
		}
		break
	}
	if i >= len(args) || !slices.Contains(configCommands, args[i]) {
		return args, nil
	}
	sub := root.Command(args[i])
	files, rest := splitConfigArgs(args[i+1:])
	if len(files) == 0 {
		return args, nil
	}
	fa, err := configArgs(sub, files, os.ReadFile, nil)
	if err != nil {
		return nil, err
	}
	set, positional := commandLineFlags(sub, rest)
	tokens, trace, err := renderArgs(sub, fa, set)
	if err != nil {
		return nil, err
	}
	out := slices.Concat(args[:i+1], tokens, rest)
	if trace != "" && !positional {
		out = append(out, trace)
	}
	return out, nil
}

// splitConfigArgs takes the -f/--config values out of a command's
// arguments (up to a "--").
func splitConfigArgs(args []string) (files, rest []string) {
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			return files, append(rest, args[i:]...)
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		if strings.HasPrefix(tok, "-") && (name == "f" || name == "config") {
			if hasVal {
				files = append(files, val)
			} else if i+1 < len(args) {
				files = append(files, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, tok)
	}
	return files, rest
}

// flagIndex maps every name and alias of cmd's flags to the flag.
func flagIndex(cmd *cli.Command) map[string]cli.Flag {
	m := map[string]cli.Flag{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			m[n] = f
		}
	}
	return m
}

// commandLineFlags returns the canonical names of the flags args set and
// whether args hold a positional argument.
func commandLineFlags(cmd *cli.Command, args []string) (set map[string]bool, positional bool) {
	idx := flagIndex(cmd)
	set = map[string]bool{}
	for i := 0; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			return set, i+1 < len(args)
		}
		if !strings.HasPrefix(tok, "-") || tok == "-" {
			positional = true
			continue
		}
		name, _, hasVal := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		f, ok := idx[name]
		if !ok {
			continue
		}
		set[f.Names()[0]] = true
		if vf, ok := f.(cli.DocGenerationFlag); ok && vf.TakesValue() && !hasVal {
			i++
		}
	}
	return set, positional
}

// configSchema is the schema of cmd's files: AIPerf's sections for
// profile, cmd's own flag names for replay and sweep (and trace, the
// positional TRACE).
func configSchema(cmd *cli.Command) *config.Schema {
	var names, repeatable []string
	for _, f := range cmd.Flags {
		if f.Names()[0] == "config" {
			continue
		}
		names = append(names, f.Names()...)
		if _, ok := f.(*cli.StringSliceFlag); ok {
			repeatable = append(repeatable, f.Names()...)
		}
	}
	if cmd.Name == "profile" {
		return config.AIPerf(names, repeatable)
	}
	return config.Flat(append(names, "trace"), repeatable)
}

// configArgs reads the files and returns the Args they set, a later
// file's flags dropping an earlier file's values of the same flags. Each
// Arg's flag must be one of cmd's (profile: or one of AIPerf's it refuses,
// with its sentence). warn, when not nil, gets each file's warnings.
func configArgs(cmd *cli.Command, files []string, read func(string) ([]byte, error), warn func(*config.Warning)) ([]config.Arg, error) {
	idx := flagIndex(cmd)
	schema := configSchema(cmd)
	var perFile [][]config.Arg
	var errs []error
	for _, path := range files {
		data, err := read(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("config %w", err))
			continue
		}
		args, warns, err := config.Parse(path, data, schema)
		if warn != nil {
			for i := range warns {
				warn(&warns[i])
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var kept []config.Arg
		for _, a := range args {
			f, ok := idx[a.Flag]
			switch {
			case a.Flag == "trace" && cmd.Name != "profile":
			case ok:
				a.Flag = f.Names()[0]
			case cmd.Name == "profile" && aiperfWhy(a.Flag) != "":
				errs = append(errs, &config.Error{Path: path, Line: a.Line, Key: a.Key,
					Err: fmt.Errorf("aiperf's %s is not supported: %s", dashed(a.Flag), aiperfWhy(a.Flag))})
				continue
			default:
				errs = append(errs, &config.Error{Path: path, Line: a.Line, Key: a.Key,
					Err: fmt.Errorf("reprise %s has no flag %s", cmd.Name, dashed(a.Flag))})
				continue
			}
			kept = append(kept, a)
		}
		perFile = append(perFile, kept)
	}
	if len(errs) > 0 {
		return nil, exitcode.UsageError(errors.Join(errs...), configHint)
	}
	// A later file overrides an earlier one flag by flag.
	var out []config.Arg
	later := map[string]bool{}
	for i := len(perFile) - 1; i >= 0; i-- {
		var keep []config.Arg
		for _, a := range perFile[i] {
			if !later[a.Flag] {
				keep = append(keep, a)
			}
		}
		for _, a := range perFile[i] {
			later[a.Flag] = true
		}
		out = append(keep, out...)
	}
	return out, nil
}

// renderArgs spells the Args as command-line tokens, leaving out the
// flags the command line sets; trace is the file's TRACE positional.
func renderArgs(cmd *cli.Command, args []config.Arg, set map[string]bool) (tokens []string, trace string, err error) {
	idx := flagIndex(cmd)
	var errs []error
	for _, a := range args {
		if a.Flag == "trace" {
			trace = a.Value
			continue
		}
		if set[a.Flag] {
			continue
		}
		f := idx[a.Flag]
		if vf, ok := f.(cli.DocGenerationFlag); ok && !vf.TakesValue() {
			on, perr := strconv.ParseBool(a.Value)
			if perr != nil {
				errs = append(errs, &config.Error{Path: a.Path, Line: a.Line, Key: a.Key, Err: fmt.Errorf("%s is a switch: want true or false, got %q", dashed(a.Flag), a.Value)})
				continue
			}
			switch _, inverse := f.(*cli.BoolWithInverseFlag); {
			case on:
				tokens = append(tokens, "--"+a.Flag)
			case inverse:
				tokens = append(tokens, "--no-"+a.Flag)
			default:
				tokens = append(tokens, "--"+a.Flag+"=false")
			}
			continue
		}
		tokens = append(tokens, "--"+a.Flag+"="+a.Value)
	}
	if len(errs) > 0 {
		return nil, "", exitcode.UsageError(errors.Join(errs...), configHint)
	}
	return tokens, trace, nil
}

// configCommand is `reprise config`: validate, expand and init.
func configCommand(a *app) *cli.Command {
	forFlag := &cli.StringFlag{Name: "for", Value: "profile", Usage: "the `COMMAND` whose file it is: profile (AIPerf's sections), replay or sweep (their own flag names)"}
	return &cli.Command{
		Name:  "config",
		Usage: "check, expand or start a YAML config file of profile, replay or sweep (-f FILE)",
		Commands: []*cli.Command{
			{
				Name:      "validate",
				Usage:     "check a config file: its keys, values and the command's flag checks (exit 0 ok, 2 not); warnings on stderr",
				ArgsUsage: "FILE",
				Flags:     []cli.Flag{forFlag},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					args, _, err := resolvedConfig(ctx, a, cmd)
					if err != nil {
						return err
					}
					fmt.Fprintf(a.stdout, "%s: valid (%d flags for reprise %s)\n", cmd.Args().First(), len(args), cmd.String("for"))
					return nil
				},
			},
			{
				Name:      "expand",
				Usage:     "print the command line of every run the config file makes",
				ArgsUsage: "FILE",
				Flags:     []cli.Flag{forFlag},
				Action: func(ctx context.Context, cmd *cli.Command) error {
					args, ex, err := resolvedConfig(ctx, a, cmd)
					if err != nil {
						return err
					}
					fmt.Fprintln(a.stdout, shellLine(append([]string{"reprise", cmd.String("for")}, args...)))
					// A profile sweep: then its runs, in run order, each
					// named as its artifact sub-directory.
					for _, pt := range expansionPoints(ex) {
						fmt.Fprintln(a.stdout, pt)
					}
					return nil
				},
			},
			{
				Name:      "init",
				Usage:     "write a commented starting profile config to FILE (default: standard output)",
				ArgsUsage: "[FILE]",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "write over an existing FILE"}},
				Action: func(_ context.Context, cmd *cli.Command) error {
					path := cmd.Args().First()
					if path == "" || path == "-" {
						_, err := io.WriteString(a.stdout, config.Template)
						return err
					}
					flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
					if cmd.Bool("force") {
						flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
					}
					f, err := os.OpenFile(path, flags, 0o644)
					if err != nil {
						return exitcode.UsageError(fmt.Errorf("config init: %w", err), "give another FILE or --force")
					}
					if _, err := io.WriteString(f, config.Template); err != nil {
						f.Close()
						return err
					}
					return f.Close()
				},
			},
		},
	}
}

// resolvedConfig reads FILE for the command --for names, prints its
// warnings on stderr, checks the flags it resolves to as that command
// parses them (and, for profile, maps them to Options), and returns them
// as command-line tokens.
func resolvedConfig(ctx context.Context, a *app, cmd *cli.Command) ([]string, *sweep.Expansion, error) {
	if cmd.Args().Len() != 1 {
		return nil, nil, exitcode.UsageError(errors.New("want one FILE"), "reprise config "+cmd.Name+" FILE")
	}
	path, name := cmd.Args().First(), cmd.String("for")
	if !slices.Contains(configCommands, name) {
		return nil, nil, exitcode.UsageError(fmt.Errorf("--for %q: want profile, replay or sweep", name), "")
	}
	// A fresh command tree whose command only checks its flags.
	quiet := &app{stdin: a.stdin, stdout: io.Discard, stderr: io.Discard, log: a.log, abort: a.abort}
	root := newRoot(quiet)
	sub := root.Command(name)
	fa, err := configArgs(sub, []string{path}, os.ReadFile, func(w *config.Warning) {
		fmt.Fprintf(a.stderr, "warning: %s\n", w.Error())
	})
	if err != nil {
		return nil, nil, err
	}
	tokens, trace, err := renderArgs(sub, fa, nil)
	if err != nil {
		return nil, nil, err
	}
	if trace != "" {
		tokens = append(tokens, trace)
	}
	var checkErr error
	var ex *sweep.Expansion
	sub.Action = func(_ context.Context, c *cli.Command) error {
		switch name {
		case "profile":
			if _, _, checkErr = profileOptions(c); checkErr != nil {
				return nil
			}
			ps, _, err := flagmap.ProfileSweep(c)
			if err == nil && ps.Active() {
				ex, err = sweep.ExpandProfile(ps)
			}
			checkErr = err
		default:
			_, checkErr = flagmap.Timing(c)
		}
		return nil
	}
	var errBuf strings.Builder
	root.ErrWriter = &errBuf
	if err := root.Run(ctx, append([]string{"reprise", name}, tokens...)); err != nil {
		return nil, nil, exitcode.UsageError(fmt.Errorf("%s: %w", path, err), configHint)
	}
	if checkErr != nil {
		return nil, nil, exitcode.UsageError(fmt.Errorf("%s: %w", path, checkErr), configHint)
	}
	return tokens, ex, nil
}

// expansionPoints are the lines config expand prints for a profile
// sweep's runs: "NAME: SETTING=VALUE …" each (none for nil).
func expansionPoints(ex *sweep.Expansion) []string {
	if ex == nil {
		return nil
	}
	lines := make([]string, len(ex.Points))
	for i, pt := range ex.Points {
		var kv []string
		for j, n := range pt.Names {
			kv = append(kv, n+"="+strconv.FormatFloat(pt.Values[j], 'g', -1, 64))
		}
		lines[i] = pt.Name() + ": " + strings.Join(kv, " ")
	}
	return lines
}

// shellLine joins args into a line a POSIX shell reads back as args.
func shellLine(args []string) string {
	out := make([]string, len(args))
	for i, s := range args {
		if s != "" && strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
		}) < 0 {
			out[i] = s
			continue
		}
		out[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
