package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/wasm"
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

func adaptersListCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the endpoint adapters in this binary, native and Wasm",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return exitcode.Usagef("list takes no arguments, got %q", cmd.Args().Slice())
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tLANGUAGE\tPATH\tSIZE\tSHA256\tAPI")
			for _, n := range native.List() {
				fmt.Fprintf(tw, "%s\tnative\tGo\t%s\t-\t-\t%s\n", n.Name, n.Adapter.Info().Path, n.API)
			}
			for _, name := range wasm.ShippedNames() {
				ad, err := wasm.Load(ctx, name, wasm.Config{Log: a.log})
				if err != nil {
					return err
				}
				d := ad.Describe()
				fmt.Fprintf(tw, "%s\twasm\t%s\t%s\t%s\t%s\t%s\n", name, wasm.ShippedLanguage(name), d.Path, byteSize(ad.Size()), ad.SHA256()[:16], wasm.ShippedAPI(name))
				ad.Close(ctx)
			}
			return tw.Flush()
		},
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
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
			ad, err := wasm.Load(ctx, spec, wasm.Config{Log: a.log})
			if err != nil {
				return exitcode.UsageError(err, "")
			}
			defer ad.Close(ctx)
			d := ad.Describe()
			w := a.stdout
			fmt.Fprintf(w, "name:           %s\n", d.Name)
			fmt.Fprintf(w, "version:        %s\n", d.Version)
			fmt.Fprintf(w, "source:         %s\n", ad.Source())
			if l := wasm.ShippedLanguage(spec); l != "" {
				fmt.Fprintf(w, "language:       %s\n", l)
			}
			fmt.Fprintf(w, "sha256:         %s\n", ad.SHA256())
			fmt.Fprintf(w, "size:           %s\n", byteSize(ad.Size()))
			fmt.Fprintf(w, "abi:            v%d\n", d.ABI)
			fmt.Fprintf(w, "path:           %s\n", d.Path)
			fmt.Fprintf(w, "builds:         %v\n", d.Builds)
			fmt.Fprintf(w, "parses:         %v\n", d.Parses)
			fmt.Fprintf(w, "framing:        %s\n", d.Framing)
			fmt.Fprintf(w, "tokenizer:      %v\n", d.NeedsTokenizer)
			fmt.Fprintf(w, "records/event:  %d\n", d.MaxRecordsPerEvent)
			fmt.Fprintf(w, "events/call:    %d\n", d.MaxEventsPerCall)
			fmt.Fprintf(w, "interruptible:  %v\n", ad.Interruptible())
			imp := ad.Imports()
			if len(imp) == 0 {
				imp = []string{"(none)"}
			}
			fmt.Fprintf(w, "imports:        %s\n", strings.Join(imp, ", "))
			return nil
		},
	}
}

// adaptersTestConfig is the `adapters test` command line.
type adaptersTestConfig struct {
	Args          []string
	Fixtures      []string
	Batch         int
	Model         string
	AdapterConfig string
	Build         bool
}

// Validate reports every problem at once.
func (c adaptersTestConfig) Validate() error {
	var errs []error
	switch len(c.Args) {
	case 0:
		errs = append(errs, errors.New("missing adapter: give a .wasm file or a shipped name"))
	case 1:
	default:
		errs = append(errs, fmt.Errorf("want one adapter, got %d: %s", len(c.Args), strings.Join(c.Args, " ")))
	}
	if len(c.Fixtures) == 0 && !c.Build {
		errs = append(errs, errors.New("nothing to do: give --fixture PATH (a recorded .http response or a raw SSE body) and/or --build"))
	}
	for _, f := range c.Fixtures {
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("--fixture: %w", err))
		}
	}
	if c.Batch < 0 {
		errs = append(errs, fmt.Errorf("--batch %d: want a positive number of events (0 = all in one batch)", c.Batch))
	}
	return errors.Join(errs...)
}

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
			c := adaptersTestConfig{Args: cmd.Args().Slice(), Fixtures: cmd.StringSlice("fixture"), Batch: int(cmd.Int("batch")),
				Model: cmd.String("model"), AdapterConfig: cmd.String("adapter-config"), Build: cmd.Bool("build")}
			if err := c.Validate(); err != nil {
				return exitcode.UsageError(err, "see 'reprise adapters test --help'")
			}
			return runAdaptersTest(ctx, a, c)
		},
	}
}

// testSubject is the adapter `adapters test` runs: a native endpoint or a
// loaded Wasm module.
type testSubject struct {
	name    string
	info    adapter.Info
	builds  bool
	parses  bool
	in      adapter.Instance
	spent   func() time.Duration // adapter time so far
	release func()
}

func loadTestSubject(ctx context.Context, a *app, c adaptersTestConfig) (*testSubject, error) {
	cfg := &adapter.Config{Model: c.Model, Stream: true}
	n, ok := native.Lookup(c.Args[0])
	if !ok && strings.HasSuffix(c.Args[0], ".json") {
		t, err := openai.LoadTemplate(c.Args[0])
		if err != nil {
			return nil, exitcode.UsageError(err, "see docs/format/template.md")
		}
		n, ok = native.Endpoint{Name: t.Info().Name, Adapter: t}, true
	}
	if ok {
		if c.AdapterConfig != "" {
			var opts map[string]string
			if err := json.Unmarshal([]byte(c.AdapterConfig), &opts); err != nil {
				return nil, exitcode.UsageError(fmt.Errorf("--adapter-config: a native endpoint takes a JSON object of strings: %w", err), "")
			}
			cfg.Options = opts
		}
		in, err := n.Adapter.NewInstance(cfg)
		if err != nil {
			return nil, exitcode.UsageError(err, "")
		}
		var spent time.Duration
		ts := &testSubject{name: n.Name, info: n.Adapter.Info(), builds: true, parses: true, release: func() { in.Release() }}
		ts.in = timedInstance{Instance: in, spent: &spent}
		ts.spent = func() time.Duration { return spent }
		return ts, nil
	}
	ad, err := wasm.Load(ctx, c.Args[0], wasm.Config{Log: a.log, AdapterConfig: []byte(c.AdapterConfig)})
	if err != nil {
		return nil, exitcode.UsageError(err, "")
	}
	in, err := ad.Instantiate(cfg)
	if err != nil {
		ad.Close(ctx)
		return nil, exitcode.UsageError(err, "")
	}
	d := ad.Describe()
	return &testSubject{name: ad.Name(), info: ad.Info(), builds: d.Builds, parses: d.Parses, in: in, spent: in.Spent,
		release: func() { in.Release(); ad.Close(ctx) }}, nil
}

// timedInstance adds up the time a native instance spends parsing.
type timedInstance struct {
	adapter.Instance
	spent *time.Duration
}

func (t timedInstance) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	t0 := time.Now()
	defer func() { *t.spent += time.Since(t0) }()
	return t.Instance.Parse(ctx, b, dst)
}

func runAdaptersTest(ctx context.Context, a *app, c adaptersTestConfig) error {
	ts, err := loadTestSubject(ctx, a, c)
	if err != nil {
		return err
	}
	defer ts.release()
	if len(c.Fixtures) > 0 && !ts.parses {
		return exitcode.Usagef("adapter %s does not parse responses", ts.name)
	}
	w := a.stdout
	var failed []string
	if c.Build {
		if err := printBuild(w, ts); err != nil {
			failed = append(failed, "build: "+err.Error())
		}
	}
	for i, f := range c.Fixtures {
		rec, err := wasm.ReadRecording(f)
		if err != nil {
			return exitcode.UsageError(err, "a fixture is an .http recording or a raw SSE body")
		}
		before := ts.spent()
		cl, err := wasm.Classify(ts.in, uint32(i+1), rec, ts.info.Framing, c.Batch)
		fmt.Fprintf(w, "== %s: HTTP %d, %d events, adapter time %v\n", filepath.Base(f), rec.Status, len(cl.Events), ts.spent()-before)
		if werr := wasm.WriteClassified(w, cl); werr != nil {
			return werr
		}
		if err != nil {
			fmt.Fprintf(w, "adapter error: %v\n", err)
			failed = append(failed, f+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("adapter failed on %d input(s): %s", len(failed), failed[0])
	}
	return nil
}

// printBuild builds and prints a request for a sample row.
func printBuild(w io.Writer, ts *testSubject) error {
	if !ts.builds {
		fmt.Fprintf(w, "== build: adapter %s does not build requests\n", ts.name)
		return nil
	}
	bi := &adapter.BuildInput{Flags: adapter.BuildStream | adapter.BuildFirstTurn, InputTokens: 6, MaxTokens: 16,
		HashIDs: []uint64{1}, BlockSize: 16, Seed: 1, PromptText: "Tell me about prefix caching."}
	var r adapter.HTTPRequest
	if err := ts.in.Build(bi, &r); err != nil {
		fmt.Fprintf(w, "== build: adapter error: %v\n", err)
		return err
	}
	path := r.Path
	if path == "" {
		path = ts.info.Path
	}
	fmt.Fprintf(w, "== build (sample row: max_tokens 16, stream)\n%s %s\n", r.Method, path)
	for _, h := range r.Header {
		fmt.Fprintf(w, "%s: %s\n", h.Name, h.Value)
	}
	last := 0
	var body []byte
	for _, h := range r.Holes {
		body = append(body, r.Body[last:h.Offset]...)
		body = append(body, fmt.Sprintf("«prompt hole kind %d»", h.Kind)...)
		last = h.Offset
	}
	body = append(body, r.Body[last:]...)
	fmt.Fprintf(w, "\n%s\n", body)
	return nil
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
