package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/capture"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/secret"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// recordCommand is `reprise record`: a thin flag mapper over capture.
func recordCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "proxy OpenAI-compatible traffic to a server and record it as a trace",
		ArgsUsage: " ",
		Description: "Listens on --listen and forwards every request to --upstream unchanged, streaming responses\n" +
			"back event by event. Each chat or completions request becomes one Mooncake-style row of --output,\n" +
			"in arrival order: arrival time, input and output lengths (the server's usage, else --tokenizer's\n" +
			"count), the tokens the server's template added, the endpoint, the block size, hash ids of\n" +
			"the prompt's tokens in --block-size blocks (chained hashes, numbered in first-seen order), a\n" +
			"request_id, a session (--session-header, or a prompt that extends an earlier one) and wait_for\n" +
			"(a chat request whose messages hold an earlier response waits for it). No text is written unless\n" +
			"--keep-text. Stops on Ctrl-C or SIGTERM, writing every finished request. Format:\n" +
			"docs/format/traces.md, \"Recording\".\n\n" +
			"Examples:\n" +
			"  reprise record --listen 127.0.0.1:8001 --upstream http://127.0.0.1:8000 -o recorded.jsonl &\n" +
			"  reprise replay traces/mooncake-sample.jsonl --url http://127.0.0.1:8001 --model M   # traffic through it\n" +
			"  kill -INT %1; wait                     # Ctrl-C: writes recorded.jsonl\n" +
			"  reprise replay recorded.jsonl --url http://127.0.0.1:8000 --model M",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8001", Usage: "listen on `HOST:PORT`", Sources: envVars("listen")},
			&cli.StringFlag{Name: "upstream", Usage: "the server's base `URL` (http://host:port; host:port alone means that)", Sources: envVars("upstream")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "trace.jsonl", Usage: "write the trace to `FILE`", Sources: envVars("output")},
			&cli.IntFlag{Name: "block-size", Value: capture.DefaultBlockSize, Usage: "`TOKENS` per hash id", Sources: envVars("block-size")},
			&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "`SPEC` of the tokenizer that cuts prompts into blocks: builtin, o200k_base, cl100k_base, a tokenizer.json or GGUF path, or a cached model id", Sources: envVars("tokenizer")},
			&cli.StringFlag{Name: "session-header", Value: capture.DefaultSessionHeader, Usage: "request `HEADER` whose value is the session id (empty: infer sessions from prompts only)", Sources: envVars("session-header")},
			&cli.Int64Flag{Name: "max-held-bytes", Value: capture.DefaultMaxHeldBytes, Usage: "`BYTES` of request bodies and response copies held at once for recording; a request over it gets 503", Sources: envVars("max-held-bytes")},
			&cli.DurationFlag{Name: "body-timeout", Value: capture.DefaultBodyTimeout, Usage: "a chat or completions request body must arrive within `D` (else 408); 0: no bound", Sources: envVars("body-timeout")},
			&cli.DurationFlag{Name: "idle-timeout", Value: capture.DefaultIdleTimeout, Usage: "close a keep-alive connection after `D` without a request; 0: no bound", Sources: envVars("idle-timeout")},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace an existing --output (and its --keep-text file); without it record refuses to start", Sources: envVars("overwrite")},
			&cli.BoolFlag{Name: "keep-text", Usage: "also write each request body and response text to FILE.text.jsonl (the trace itself never holds text)", Sources: envVars("keep-text")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg, err := flagmap.Record(cmd, cmd.Args().Slice())
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise record --help'")
			}
			if cfg.Tokenizer, err = tokenizer.Load(cmd.String("tokenizer")); err != nil {
				return exitcode.UsageError(fmt.Errorf("--tokenizer: %w", err), "use builtin, o200k_base, cl100k_base or a tokenizer.json path")
			}
			cfg.Log = a.log
			out, err := openRecordOutputs(cmd)
			if err != nil {
				return err
			}
			if out.tw != nil {
				cfg.Text = out.tw
			}
			return serveRecord(ctx, a, cfg, out)
		},
	}
}

// recordOutputs are what record listens on and writes: the trace and,
// with --keep-text, the texts beside it.
type recordOutputs struct {
	ln   net.Listener
	path string
	f    *os.File
	bw   *bufio.Writer
	tf   *os.File
	tw   *bufio.Writer
}

// openRecordOutputs opens the listener and the files. An existing trace
// is not truncated unless asked: both files are checked before either is
// created.
func openRecordOutputs(cmd *cli.Command) (*recordOutputs, error) {
	o := &recordOutputs{path: cmd.String("output")}
	keep, overwrite := cmd.Bool("keep-text"), cmd.Bool("overwrite")
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	} else {
		for _, c := range []struct{ flag, path string }{{"--output", o.path}, {"--keep-text", o.path + ".text.jsonl"}} {
			if c.flag == "--keep-text" && !keep {
				continue
			}
			if _, err := os.Lstat(c.path); err == nil {
				return nil, exitcode.UsageError(fmt.Errorf("%s %s: the file exists", c.flag, c.path), "give another --output, or pass --overwrite to replace it")
			}
		}
	}
	var err error
	if o.ln, err = net.Listen("tcp", cmd.String("listen")); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("--listen: %w", err), "pick a free HOST:PORT")
	}
	if o.f, err = os.OpenFile(o.path, mode, 0o644); err != nil {
		o.ln.Close()
		return nil, exitcode.UsageError(fmt.Errorf("--output: %w", err), "give another --output, or pass --overwrite to replace it")
	}
	o.bw = bufio.NewWriter(o.f)
	if keep {
		if o.tf, err = os.OpenFile(o.path+".text.jsonl", mode, 0o644); err != nil {
			o.ln.Close()
			o.f.Close()
			if !overwrite {
				os.Remove(o.path) // created just now, empty
			}
			return nil, exitcode.UsageError(fmt.Errorf("--keep-text: %w", err), "")
		}
		o.tw = bufio.NewWriter(o.tf)
	}
	return o, nil
}

// serveRecord proxies and records until ctx ends, then closes the
// outputs and prints what was recorded.
func serveRecord(ctx context.Context, a *app, cfg capture.Config, o *recordOutputs) error {
	rec, err := capture.New(cfg, o.bw)
	if err != nil {
		o.ln.Close()
		o.f.Close()
		return err
	}
	srv := rec.NewServer()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(o.ln) }()
	a.log.Info("recording", "listen", "http://"+o.ln.Addr().String(), "upstream", secret.URL(cfg.Upstream.String()), "output", o.path)
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	err = errors.Join(err, rec.Close())
	if o.tw != nil {
		err = errors.Join(err, o.tw.Flush(), o.tf.Close())
	}
	err = errors.Join(err, o.f.Close())
	st := rec.Stats()
	fmt.Fprintf(a.stderr, "reprise record: %d requests proxied, %d recorded to %s, %d not recorded (failed or unreadable), %d cancelled before their response ended (client gone, or cut at shutdown; not recorded)\n",
		st.Requests, st.Recorded, o.path, st.Skipped, st.Cancelled)
	return err
}
