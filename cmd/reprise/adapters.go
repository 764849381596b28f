package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/adapters"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/wasm/scaffold"
)

// adaptersCommand is `reprise adapters list|inspect|test|new`.
func adaptersCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:  "adapters",
		Usage: "list, inspect, test and scaffold endpoint adapters (native ones and sandboxed Wasm modules)",
		Description: "Endpoint adapters build the requests of one API and classify its responses. The native ones\n" +
			"(chat, completions, responses, ...) are compiled in; the others are WebAssembly modules (ABI:\n" +
			"docs/format/adapter-abi.md) written in Go, C, Rust or AssemblyScript, passed to replay as\n" +
			"--endpoint FILE.wasm or the name of a shipped adapter.\n\n" +
			"Examples:\n" +
			"  reprise adapters list\n" +
			"  reprise adapters inspect anthropic-messages\n" +
			"  reprise adapters test my.wasm --fixture recorded.http\n" +
			"  reprise adapters new --lang rust my-gateway",
		Commands: []*cli.Command{
			adaptersListCommand(a),
			adaptersInspectCommand(a),
			adaptersTestCommand(a),
			adaptersNewCommand(a),
		},
	}
}

// adaptersListCommand is `reprise adapters list`: [adapters.List].
func adaptersListCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the endpoint adapters in this binary, native and Wasm",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return exitcode.Usagef("list takes no arguments, got %q", cmd.Args().Slice())
			}
			return adapters.List(ctx, a.stdout, a.log)
		},
	}
}

// oneModule checks that exactly one FILE|NAME argument was given.
func oneModule(cmd *cli.Command) (string, error) {
	switch n := cmd.Args().Len(); n {
	case 0:
		return "", exitcode.UsageError(errors.New("missing adapter: give a .wasm file or a shipped name"), "see 'reprise adapters list'")
	case 1:
		return cmd.Args().First(), nil
	default:
		return "", exitcode.Usagef("want one adapter, got %d: %s", n, strings.Join(cmd.Args().Slice(), " "))
	}
}

// adaptersInspectCommand is `reprise adapters inspect`: one argument, then
// [adapters.Inspect].
func adaptersInspectCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "load an adapter and print its description, hash and imports",
		ArgsUsage: "FILE.wasm|NAME",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			spec, err := oneModule(cmd)
			if err != nil {
				return err
			}
			return adapters.Inspect(ctx, a.stdout, spec, a.log)
		},
	}
}

// adaptersTestCommand is `reprise adapters test`: its flags, then
// [adapters.Test].
func adaptersTestCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "test",
		Usage:     "run an adapter on recorded responses and print the classified events",
		ArgsUsage: "FILE.wasm|FILE.json|NAME",
		Description: "NAME is a native endpoint (chat, responses, ...), a template FILE.json or a shipped Wasm adapter.\n" +
			"Frames each --fixture the way replay does (SSE events, comments and [DONE] flagged; a\n" +
			"non-stream or non-2xx body as one event), runs the adapter's parser on it with text capture on,\n" +
			"and prints every event with the records it produced, then the final summary. --build also\n" +
			"prints the request the adapter builds for a sample row. Exit code 1 if the adapter fails.\n\n" +
			"A fixture is an .http file (status line, headers, blank line, de-chunked body; record one\n" +
			"with curl -sN -D - -o - URL ...) or a raw text/event-stream body.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "fixture", Aliases: []string{"f"}, Usage: "recorded response `PATH` (repeatable)"},
			&cli.IntFlag{Name: "batch", Usage: "events per parse call, `N` (0 = all at once, as replay does)"},
			&cli.StringFlag{Name: "model", Value: "test-model", Usage: "`MODEL` passed to the adapter's configure"},
			&cli.StringFlag{Name: "adapter-config", Usage: "adapter options as a `JSON` object", Sources: envVars("adapter-config")},
			&cli.BoolFlag{Name: "build", Usage: "also print the request built for a sample row"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			c := adapters.TestConfig{Args: cmd.Args().Slice(), Fixtures: cmd.StringSlice("fixture"), Batch: int(cmd.Int("batch")),
				Model: cmd.String("model"), AdapterConfig: cmd.String("adapter-config"), Build: cmd.Bool("build"), Log: a.log}
			if err := c.Validate(); err != nil {
				return exitcode.UsageError(err, "see 'reprise adapters test --help'")
			}
			return adapters.Test(ctx, a.stdout, c)
		},
	}
}

func adaptersNewCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "new",
		Usage:     "scaffold a new adapter project from the SDK template",
		ArgsUsage: "NAME",
		Description: "Writes a working template adapter (a generic {\"text\": ...} streaming API) with the SDK files,\n" +
			"a Makefile (make; make test) and a sample recorded stream into DIR (default ./NAME).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lang", Usage: "`LANGUAGE`: go, c, rust or assemblyscript"},
			&cli.StringFlag{Name: "dir", Usage: "output `DIR` (default ./NAME); must not exist or be empty"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			var errs []error
			if cmd.Args().Len() != 1 {
				errs = append(errs, fmt.Errorf("want one NAME, got %d", cmd.Args().Len()))
			}
			if cmd.String("lang") == "" {
				errs = append(errs, errors.New("missing --lang: go, c, rust or assemblyscript"))
			}
			if err := errors.Join(errs...); err != nil {
				return exitcode.UsageError(err, "reprise adapters new --lang go my-adapter")
			}
			name := cmd.Args().First()
			dir := cmd.String("dir")
			if dir == "" {
				dir = name
			}
			files, err := scaffold.Write(dir, cmd.String("lang"), name)
			if err != nil {
				return exitcode.UsageError(err, "")
			}
			fmt.Fprintf(a.stdout, "created %s (%s):\n", dir, cmd.String("lang"))
			for _, f := range files {
				fmt.Fprintf(a.stdout, "  %s\n", f)
			}
			fmt.Fprintf(a.stdout, "next: cd %s && make && make test\n", dir)
			return nil
		},
	}
}
