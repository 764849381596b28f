package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/anonymize"
)

// anonymizeCommand is `reprise anonymize TRACE`: a thin flag mapper over
// trace/anonymize.
func anonymizeCommand(a *app) *cli.Command {
	return &cli.Command{
		Name:      "anonymize",
		Usage:     "rewrite a trace for sharing: keyed hash ids and session ids, no text, optional time jitter",
		ArgsUsage: "TRACE",
		Description: "Reads TRACE (any supported format) and writes it as Mooncake JSONL (Bailian stays Bailian) with\n" +
			"every hash id, request id and session id re-mapped by HMAC-SHA256 under a key, request text and\n" +
			"kinds dropped, and with --jitter each timestamp moved at random. Equal ids stay equal, so\n" +
			"analyze-trace reports the same lengths and prefix-cache statistics. Without --key a fresh random\n" +
			"key is used and forgotten: the output can be linked to no other trace. Give the same --key to two\n" +
			"traces to keep their shared blocks comparable. What is kept and what can still be inferred:\n" +
			"docs/format/traces.md, \"Anonymizing\".\n\n" +
			"Examples:\n" +
			"  reprise anonymize -o shared.jsonl my-trace.jsonl\n" +
			"  reprise anonymize --key $(cat team.key) --jitter 50ms -o a.jsonl a-raw.jsonl",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Usage: "trace `FORMAT`: " + strings.Join(trace.FormatNames(), ", ") + " (default: detect from the content)", Sources: envVars("trace-format")},
			&cli.IntFlag{Name: "block-size", HideDefault: true, Usage: "`TOKENS` per hash id (default: the format's, 512 Mooncake, 16 Bailian)", Sources: envVars("block-size")},
			&cli.StringFlag{Name: "key", Usage: "`HEX` key of 64 hexadecimal digits (e.g. `openssl rand -hex 32`); default: a fresh random key, never written", Sources: envVars("key")},
			&cli.DurationFlag{Name: "jitter", Usage: "move each timestamp by a uniform draw in ±`D` (never before 0); 0 keeps them", Sources: envVars("jitter")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the trace to `FILE` instead of stdout", Sources: envVars("output")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			path, f, key, err := anonymizeFlags(cmd)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise anonymize --help'")
			}
			an, err := anonymize.New(anonymize.Config{Key: key, Jitter: cmd.Duration("jitter")})
			if err != nil {
				return err
			}
			rd, err := trace.Open(path, trace.Options{Format: f, BlockSize: cmd.Int("block-size"), Context: ctx, Log: a.log})
			if err != nil {
				return trace.UsageError(err, "--format", false)
			}
			defer rd.Close()
			out := trace.FormatMooncake
			if rd.Format() == trace.FormatBailian {
				out = trace.FormatBailian
			}
			rows, _, err := trace.ReadAllFrom(rd)
			if err != nil {
				return trace.UsageError(err, "--format", false)
			}
			for i := range rows {
				if err := an.Row(&rows[i]); err != nil {
					return exitcode.UsageError(fmt.Errorf("%s: %w", path, err), "")
				}
			}
			return writeReport(a.stdout, cmd.String("output"), func(w io.Writer) error {
				tw, err := trace.NewWriter(w, out)
				if err != nil {
					return err
				}
				for i := range rows {
					if err := tw.Write(&rows[i]); err != nil {
						return err
					}
				}
				return tw.Flush()
			})
		},
	}
}

// anonymizeFlags checks the anonymize command line and returns the trace's
// path, its format and the key, reporting every problem at once.
func anonymizeFlags(cmd *cli.Command) (path string, f trace.Format, key []byte, err error) {
	args := cmd.Args().Slice()
	var errs []error
	if len(args) != 1 {
		errs = append(errs, fmt.Errorf("want one TRACE, got %d", len(args)))
	} else if trace.SameFile(args[0], cmd.String("output")) {
		errs = append(errs, fmt.Errorf("--output %s is the trace itself; write the anonymized trace to another file", cmd.String("output")))
	}
	f, err = trace.ParseFormat(cmd.String("format"))
	if err != nil {
		errs = append(errs, fmt.Errorf("--format: %w", err))
	}
	key = anonymize.NewKey()
	if s := cmd.String("key"); s != "" {
		if key, err = anonymize.ParseKey(s); err != nil {
			errs = append(errs, fmt.Errorf("--key: %w", err))
		}
	}
	if cmd.Duration("jitter") < 0 {
		errs = append(errs, fmt.Errorf("--jitter %v: want a duration ≥ 0", cmd.Duration("jitter")))
	}
	if cmd.Int("block-size") < 0 {
		errs = append(errs, fmt.Errorf("--block-size %d: want a positive number of tokens (0 = the format's default)", cmd.Int("block-size")))
	}
	if len(args) == 1 {
		path = args[0]
	}
	return path, f, key, errors.Join(errs...)
}
