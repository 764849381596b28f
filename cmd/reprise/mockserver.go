package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/internal/flagmap"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/prio"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// mockServerCommand is `reprise mock-server`: an OpenAI-compatible
// simulator with a latency model, a prefix cache, fault injection and an
// oracle event log.
func mockServerCommand(a *app) *cli.Command {
	d := mockserver.NewConfig()
	return &cli.Command{
		Name:  "mock-server",
		Usage: "serve an OpenAI-compatible simulator that records when it wrote every byte",
		Description: "Serves /v1/chat/completions, /v1/completions (SSE and JSON), /v1/models, /tokenize, /detokenize,\n" +
			"/health and /metrics " +
			"with vLLM's shapes (or llama.cpp's with --flavor llamacpp). Tokens follow a latency model\n" +
			"(TTFT = --ttft + --prefill-per-token x uncached prompt tokens; ITL = --itl + --itl-per-running x\n" +
			"other running requests) behind a --max-num-seqs queue, with a prefix cache of --block-size blocks.\n" +
			"--event-log writes the server's truth (JSONL, docs/format/mock-server.md) to compare clients with.\n" +
			"Faults: --fault KIND[=PARAM]@RATE, or per request the header X-Reprise-Fault: KIND[=PARAM][,...].",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: d.Addr, Usage: "listen on `HOST:PORT` (port 0 picks a free one)", Sources: mockEnv("addr")},
			&cli.StringFlag{Name: "flavor", Value: string(d.Flavor), Usage: "response shapes and quirks (`FLAVOR`): vllm or llamacpp", Sources: mockEnv("flavor")},
			&cli.StringSliceFlag{Name: "model", Value: d.Models, Usage: "served model `NAME`s; the first is the default", Sources: mockEnv("model")},
			&cli.DurationFlag{Name: "ttft", Value: d.TTFT, Usage: "base time to first token `DURATION` after admission", Sources: mockEnv("ttft")},
			&cli.DurationFlag{Name: "prefill-per-image", Value: d.PrefillPerImage, Usage: "added to TTFT per image a request carries (`DURATION`)", Sources: mockEnv("prefill-per-image")},
			&cli.DurationFlag{Name: "prefill-per-audio-second", Value: d.PrefillPerAudioSecond, Usage: "added to TTFT per second of audio a request carries (`DURATION`)", Sources: mockEnv("prefill-per-audio-second")},
			&cli.DurationFlag{Name: "prefill-per-token", Value: d.PrefillPerToken, Usage: "added to TTFT per uncached prompt token (`DURATION`)", Sources: mockEnv("prefill-per-token")},
			&cli.DurationFlag{Name: "itl", Value: d.ITL, Usage: "base inter-token latency `DURATION`", Sources: mockEnv("itl")},
			&cli.DurationFlag{Name: "itl-per-running", Value: d.ITLPerRunning, Usage: "added to every ITL per other running request (`DURATION`)", Sources: mockEnv("itl-per-running")},
			&cli.DurationFlag{Name: "jitter", Value: d.Jitter, Usage: "scale of the random delay added to TTFT and each ITL (`DURATION`)", Sources: mockEnv("jitter")},
			&cli.StringFlag{Name: "jitter-dist", Value: string(d.JitterDist), Usage: "jitter `DIST`: none, uniform (±jitter), normal (sd jitter) or exponential (mean jitter)", Sources: mockEnv("jitter-dist")},
			&cli.IntFlag{Name: "max-num-seqs", Value: d.MaxNumSeqs, Usage: "`N` requests run at once; the rest queue (FIFO)", Sources: mockEnv("max-num-seqs")},
			&cli.IntFlag{Name: "max-model-len", Value: d.MaxModelLen, Usage: "context length in `TOKENS` (prompt + max_tokens)", Sources: mockEnv("max-model-len")},
			&cli.IntFlag{Name: "block-size", Value: d.BlockSize, Usage: "prefix-cache block size in `TOKENS`", Sources: mockEnv("block-size")},
			&cli.IntFlag{Name: "prefix-cache-tokens", Value: d.PrefixCacheTokens, Usage: "prefix-cache LRU capacity in `TOKENS`; 0 disables it", Sources: mockEnv("prefix-cache-tokens")},
			&cli.IntFlag{Name: "chat-template-tokens", Value: d.ChatTemplateTokens, Usage: "`N` extra prompt tokens per chat message, as a chat template adds", Sources: mockEnv("chat-template-tokens")},
			&cli.StringFlag{Name: "chat-template", Usage: "render chat requests through the chat template of the tokenizer in `DIR` (its tokenizer_config.json or chat_template.jinja) or GGUF file, and count prompt_tokens on the result, each added token one token", Sources: mockEnv("chat-template")},
			&cli.IntFlag{Name: "reasoning-tokens", Value: d.ReasoningTokens, Usage: "send the first `N` output tokens as reasoning_content", Sources: mockEnv("reasoning-tokens")},
			&cli.BoolFlag{Name: "coalesce", Usage: "write SSE events due at the same instant in one write (default: one write and flush per event)", Sources: mockEnv("coalesce")},
			&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "`SEED` for ids, random lengths, jitter and fault draws", Sources: mockEnv("seed")},
			&cli.StringSliceFlag{Name: "fault", Usage: "inject `KIND[=PARAM]@RATE` at random, e.g. 429@0.01, stall=2s@0.001 (repeatable)", Sources: mockEnv("fault")},
			&cli.StringFlag{Name: "tokenizer", Value: "builtin", Usage: "count prompt tokens (usage, /tokenize) with `SPEC`: builtin (o200k_base), an encoding name, a tokenizer.json, a GGUF model file or a model dir", Sources: mockEnv("tokenizer")},
			&cli.IntFlag{Name: "nice", DefaultText: "as started", Usage: "run the server's threads at nice value `N` (e.g. 10: on a machine it shares with reprise, the kernel then runs the client first)", Sources: mockEnv("nice")},
			&cli.StringFlag{Name: "event-log", Usage: "write the oracle log as JSONL to `FILE` (- = stdout), one line as each request ends", Sources: mockEnv("event-log")},
			&cli.DurationFlag{Name: "image-time", Value: d.ImageTime, Usage: "generation takes `DURATION` per image (/v1/images/generations)", Sources: mockEnv("image-time")},
			&cli.DurationFlag{Name: "audio-per-second", Value: d.AudioPerSecond, Usage: "speech and transcription take `DURATION` per second of audio", Sources: mockEnv("audio-per-second")},
			&cli.DurationFlag{Name: "video-queue", Value: d.VideoQueue, Usage: "a video job waits `DURATION` in the queue", Sources: mockEnv("video-queue")},
			&cli.DurationFlag{Name: "video-frame-time", Value: d.VideoFrameTime, Usage: "a video job takes `DURATION` per frame", Sources: mockEnv("video-frame-time")},
			&cli.IntFlag{Name: "video-fps", Value: d.VideoFPS, Usage: "`N` frames per second of video", Sources: mockEnv("video-fps")},
			&cli.DurationFlag{Name: "cpu-per-token", Value: d.CPUPerToken, Usage: "busy-loop `DURATION` of CPU before each output token, a server with compute of its own (0 = none)", Sources: mockEnv("cpu-per-token")},
			&cli.StringFlag{Name: "url-file", Usage: "write the server's base URL to `FILE` once it listens (with --addr port 0: which port it got)", Sources: mockEnv("url-file")},
			&cli.DurationFlag{Name: "body-timeout", Value: d.BodyTimeout, Usage: "answer 408 and close a connection whose request body has not arrived within `DURATION` (0 = no limit)", Sources: mockEnv("body-timeout")},
			&cli.DurationFlag{Name: "idle-timeout", Value: d.IdleTimeout, Usage: "close keep-alive connections idle for `DURATION` (0 = never)", Sources: mockEnv("idle-timeout")},
			&cli.FloatFlag{Name: "accuracy", Value: 1, Usage: "answer a graded prompt (an item of --accuracy-benchmark/--accuracy-file) right with probability `P`", Sources: mockEnv("accuracy")},
			&cli.StringFlag{Name: "accuracy-under-load", Usage: "answer right with probability P only, past N requests in flight (`P@N`, several comma-separated)", Sources: mockEnv("accuracy-under-load")},
			&cli.StringFlag{Name: "accuracy-benchmark", Usage: "know the answers of benchmark `NAME` (mmlu, gsm8k, aime): its --accuracy-data, else the Hugging Face Hub", Sources: mockEnv("accuracy-benchmark")},
			&cli.StringFlag{Name: "accuracy-data", Usage: "the benchmark's local data (`DIR` laid out as its Hub repository, or a file of its test split)", Sources: mockEnv("accuracy-data")},
			&cli.StringFlag{Name: "accuracy-file", Usage: "know the answers of a JSON Lines `FILE` of items (prompt, answer, grader)", Sources: mockEnv("accuracy-file")},
			&cli.StringSliceFlag{Name: "accuracy-tasks", Usage: "only these `TASK`s' items", Sources: mockEnv("accuracy-tasks")},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg, err := flagmap.MockServer(ctx, cmd, a.log)
			if err != nil {
				return exitcode.UsageError(err, "see 'reprise mock-server --help'")
			}
			if cfg.Tokenizer, err = tokenizer.Load(cmd.String("tokenizer")); err != nil {
				return exitcode.UsageError(fmt.Errorf("--tokenizer: %w", err), "use builtin, o200k_base, cl100k_base or a tokenizer.json path")
			}
			var logFile *os.File
			if p := cmd.String("event-log"); p == "-" {
				cfg.EventLog = a.stdout
			} else if p != "" {
				if logFile, err = os.Create(p); err != nil {
					return exitcode.UsageError(fmt.Errorf("--event-log: %w", err), "")
				}
				cfg.EventLog = logFile
			}
			err = serveMock(ctx, a, cmd, cfg)
			if logFile != nil {
				if cerr := logFile.Close(); cerr != nil {
					err = errors.Join(err, fmt.Errorf("--event-log: %w", cerr))
				}
			}
			return err
		},
	}
}

// serveMock runs the server until ctx ends: at the niceness asked, its URL
// written to --url-file once it listens.
func serveMock(ctx context.Context, a *app, cmd *cli.Command, cfg *mockserver.Config) error {
	if cmd.IsSet("nice") {
		if err := prio.SetNice(cmd.Int("nice")); err != nil {
			return fmt.Errorf("--nice %d: %w", cmd.Int("nice"), err)
		}
	}
	srv, err := mockserver.Start(ctx, cfg)
	if err != nil {
		return err
	}
	if p := cmd.String("url-file"); p != "" {
		// Written whole, then renamed: a reader polling for the file
		// never sees half a URL.
		tmp := p + ".tmp"
		err := os.WriteFile(tmp, []byte(srv.URL()+"\n"), 0o644)
		if err == nil {
			err = os.Rename(tmp, p)
		}
		if err != nil {
			_ = srv.Close()
			return exitcode.UsageError(fmt.Errorf("--url-file: %w", err), "")
		}
	}
	a.log.Info("mock-server listening", "url", srv.URL(), "flavor", cfg.Flavor, "model", cfg.Models[0],
		"ttft", cfg.TTFT, "itl", cfg.ITL, "max_num_seqs", cfg.MaxNumSeqs)
	<-srv.Done()
	return srv.Close()
}
