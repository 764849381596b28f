package flagmap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/reprise-bench/reprise/internal/accuracy"
	"github.com/reprise-bench/reprise/internal/chattmpl"
	"github.com/reprise-bench/reprise/internal/hfhub"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/prio"
)

// MockServer maps `reprise mock-server`'s flags onto the server's
// Config, every problem of them joined in the error (each naming its
// flag). The tokenizer, the event log and the process's niceness are the
// command's to open and set.
func MockServer(ctx context.Context, v Values, log *slog.Logger) (*mockserver.Config, error) {
	cfg := mockserver.NewConfig()
	cfg.Addr = v.String("addr")
	cfg.Flavor = mockserver.Flavor(v.String("flavor"))
	cfg.Models = v.StringSlice("model")
	cfg.TTFT = v.Duration("ttft")
	cfg.PrefillPerToken = v.Duration("prefill-per-token")
	cfg.PrefillPerImage = v.Duration("prefill-per-image")
	cfg.PrefillPerAudioSecond = v.Duration("prefill-per-audio-second")
	cfg.ITL = v.Duration("itl")
	cfg.ITLPerRunning = v.Duration("itl-per-running")
	cfg.Jitter = v.Duration("jitter")
	cfg.JitterDist = mockserver.JitterDist(v.String("jitter-dist"))
	cfg.MaxNumSeqs = v.Int("max-num-seqs")
	cfg.MaxModelLen = v.Int("max-model-len")
	cfg.BlockSize = v.Int("block-size")
	cfg.PrefixCacheTokens = v.Int("prefix-cache-tokens")
	cfg.ChatTemplateTokens = v.Int("chat-template-tokens")
	cfg.ReasoningTokens = v.Int("reasoning-tokens")
	cfg.Coalesce = v.Bool("coalesce")
	cfg.Seed = v.Uint64("seed")
	cfg.CPUPerToken = v.Duration("cpu-per-token")
	cfg.ImageTime, cfg.AudioPerSecond = v.Duration("image-time"), v.Duration("audio-per-second")
	cfg.VideoQueue, cfg.VideoFrameTime, cfg.VideoFPS = v.Duration("video-queue"), v.Duration("video-frame-time"), v.Int("video-fps")
	cfg.BodyTimeout = v.Duration("body-timeout")
	cfg.IdleTimeout = v.Duration("idle-timeout")
	cfg.KeepLog = false
	cfg.Log = log
	errs := []error{nil} // errors.Join drops a nil
	cfg.ChatTemplate, errs[0] = chattmpl.Open(v.String("chat-template"))
	for _, f := range CommaList(v.StringSlice("fault")) {
		fr, err := mockserver.ParseFaultRate(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("--fault: %w", err))
			continue
		}
		cfg.Faults = append(cfg.Faults, fr)
	}
	if v.IsSet("nice") {
		if err := prio.Check(v.Int("nice")); err != nil {
			errs = append(errs, fmt.Errorf("--nice: %w", err))
		}
	}
	var err error
	cfg.Accuracy, err = mockAccuracy(ctx, v, log)
	return cfg, errors.Join(append(errs, err, cfg.Validate())...)
}

// mockAccuracy is the graded items the server knows the answers of, or
// nil when none is given.
func mockAccuracy(ctx context.Context, v Values, log *slog.Logger) (*mockserver.Accuracy, error) {
	if v.String("accuracy-benchmark") == "" && v.String("accuracy-file") == "" {
		if v.IsSet("accuracy") || v.IsSet("accuracy-under-load") {
			return nil, errors.New("--accuracy: give the items whose answers the server knows (--accuracy-benchmark with --accuracy-data, or --accuracy-file)")
		}
		return nil, nil
	}
	acc, err := mockserver.NewAccuracy(ctx, accuracy.LoadOptions{Benchmark: v.String("accuracy-benchmark"), Data: v.String("accuracy-data"),
		File: v.String("accuracy-file"), Tasks: CommaList(v.StringSlice("accuracy-tasks")), Download: accuracy.HubDownload(hfhub.FromEnv(), log)},
		v.Float("accuracy"), v.String("accuracy-under-load"))
	if err != nil {
		return acc, fmt.Errorf("--accuracy-benchmark: %w", err)
	}
	return acc, nil
}
