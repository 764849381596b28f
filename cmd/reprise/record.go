package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
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
			var errs []error
			if cmd.Args().Len() > 0 {
				errs = append(errs, fmt.Errorf("record takes no arguments, got %q", cmd.Args().Slice()))
			}
			upstream := flagmap.WithScheme(cmd.String("upstream"))
			up, err := url.Parse(upstream)
			switch {
			case upstream == "":
				errs = append(errs, errors.New("--upstream: missing; give the server's base URL, e.g. http://127.0.0.1:8000"))
			case err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "":
				errs = append(errs, fmt.Errorf("--upstream %q: want an http:// or https:// URL with a host", upstream))
			}
			if cmd.Int("block-size") < 1 {
				errs = append(errs, fmt.Errorf("--block-size %d: want ≥ 1 tokens", cmd.Int("block-size")))
			}
			if cmd.Int64("max-held-bytes") < 1 {
				errs = append(errs, fmt.Errorf("--max-held-bytes %d: want ≥ 1", cmd.Int64("max-held-bytes")))
			}
			for _, f := range []string{"body-timeout", "idle-timeout"} {
				if cmd.Duration(f) < 0 {
					errs = append(errs, fmt.Errorf("--%s %v: want ≥ 0 (0: no bound)", f, cmd.Duration(f)))
				}
			}
			if cmd.String("output") == "" || cmd.String("output") == "-" {
				errs = append(errs, errors.New("--output: give a file (the trace is written as requests finish)"))
			}
			if len(errs) > 0 {
				return exitcode.UsageError(errors.Join(errs...), "see 'reprise record --help'")
			}
			tok, err := tokenizer.Load(cmd.String("tokenizer"))
			if err != nil {
				return exitcode.UsageError(fmt.Errorf("--tokenizer: %w", err), "use builtin, o200k_base, cl100k_base or a tokenizer.json path")
			}
			path := cmd.String("output")
			// An existing trace is not truncated unless asked: both files
			// are checked before either is created.
			mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if cmd.Bool("overwrite") {
				mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			} else {
				for _, o := range []struct{ flag, path string }{{"--output", path}, {"--keep-text", path + ".text.jsonl"}} {
					if o.flag == "--keep-text" && !cmd.Bool("keep-text") {
						continue
					}
					if _, err := os.Lstat(o.path); err == nil {
						return exitcode.UsageError(fmt.Errorf("%s %s: the file exists", o.flag, o.path), "give another --output, or pass --overwrite to replace it")
					}
				}
			}
			ln, err := net.Listen("tcp", cmd.String("listen"))
			if err != nil {
				return exitcode.UsageError(fmt.Errorf("--listen: %w", err), "pick a free HOST:PORT")
			}
			f, err := os.OpenFile(path, mode, 0o644)
			if err != nil {
				ln.Close()
				return exitcode.UsageError(fmt.Errorf("--output: %w", err), "give another --output, or pass --overwrite to replace it")
			}
			bw := bufio.NewWriter(f)
			cfg := capture.NewConfig()
			cfg.Upstream, cfg.Tokenizer, cfg.BlockSize = up, tok, cmd.Int("block-size")
			cfg.SessionHeader, cfg.Log = cmd.String("session-header"), a.log
			cfg.MaxHeldBytes, cfg.BodyTimeout, cfg.IdleTimeout = cmd.Int64("max-held-bytes"), cmd.Duration("body-timeout"), cmd.Duration("idle-timeout")
			var tf *os.File
			var tw *bufio.Writer
			if cmd.Bool("keep-text") {
				if tf, err = os.OpenFile(path+".text.jsonl", mode, 0o644); err != nil {
					ln.Close()
					f.Close()
					if !cmd.Bool("overwrite") {
						os.Remove(path) // created just now, empty
					}
					return exitcode.UsageError(fmt.Errorf("--keep-text: %w", err), "")
				}
				tw = bufio.NewWriter(tf)
				cfg.Text = tw
			}
			rec, err := capture.New(cfg, bw)
			if err != nil {
				ln.Close()
				f.Close()
				return err
			}
			srv := rec.NewServer()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			a.log.Info("recording", "listen", "http://"+ln.Addr().String(), "upstream", secret.URL(up.String()), "output", path)
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
			if tw != nil {
				err = errors.Join(err, tw.Flush(), tf.Close())
			}
			err = errors.Join(err, f.Close())
			st := rec.Stats()
			fmt.Fprintf(a.stderr, "reprise record: %d requests proxied, %d recorded to %s, %d not recorded (failed or unreadable), %d cancelled before their response ended (client gone, or cut at shutdown; not recorded)\n",
				st.Requests, st.Recorded, path, st.Skipped, st.Cancelled)
			return err
		},
	}
}
