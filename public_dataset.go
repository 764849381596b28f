package reprise

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/reprise-bench/reprise/internal/hfhub"
)

// publicDataset is one of AIPerf's --public-dataset names that reprise
// reads: a file of a Hugging Face dataset repository and its format.
type publicDataset struct {
	repo, file, format string
	allTurns           bool
}

// publicDatasets are the names reprise takes. AIPerf's others are
// multimodal, audio or speculative-decoding sets whose conversion AIPerf
// does in Python; their files can be given as a trace (--input-file with
// --prompt-column).
var publicDatasets = map[string]publicDataset{
	// AIPerf's dataset/loader/sharegpt.py: every human→gpt pair is a turn
	// of one session, sent with the live replies.
	"sharegpt": {repo: "anon8231489123/ShareGPT_Vicuna_unfiltered", file: "ShareGPT_V3_unfiltered_cleaned_split.json", format: "sharegpt", allTurns: true},
}

// resolvePublicDataset points o.Trace at the cached file of
// o.Trace.PublicDataset, downloading it from the Hub (HF_* environment)
// when the Hugging Face cache lacks it. Problems go to bad.
func resolvePublicDataset(ctx context.Context, o *Options, log *slog.Logger, bad func(field, format string, args ...any)) {
	name := o.Trace.PublicDataset
	d, ok := publicDatasets[name]
	if !ok {
		names := make([]string, 0, len(publicDatasets))
		for n := range publicDatasets {
			names = append(names, n)
		}
		slices.Sort(names)
		bad("Trace.PublicDataset", "{Trace.PublicDataset} %q: reprise reads %s; for another dataset download its file and give it as the trace (a JSON/JSONL/CSV/Parquet table with {Trace.Columns})",
			name, strings.Join(names, ", "))
		return
	}
	if o.Trace.Path != "" || o.Trace.Reader != nil {
		bad("Trace.PublicDataset", "{Trace.PublicDataset} %q and {Trace.Path}: give one", name)
		return
	}
	hub := hfhub.FromEnv()
	log.Info("public dataset", slog.String("name", name), slog.String("repo", d.repo), slog.String("file", d.file),
		slog.String("cache", hub.RepoDir(hfhub.Dataset, d.repo)))
	f, err := hub.Download(ctx, hfhub.Dataset, d.repo, "", d.file)
	if err != nil {
		bad("Trace.PublicDataset", "{Trace.PublicDataset} %s: %w", name, err)
		return
	}
	if !f.Cached {
		log.Info("downloaded from the Hugging Face Hub", slog.String("url", f.URL), slog.String("commit", f.Commit), slog.String("path", f.Path))
	}
	o.Trace.Path = f.Path
	if o.Trace.Format == "" {
		o.Trace.Format = d.format
	}
	o.Trace.AllTurns = o.Trace.AllTurns || d.allTurns
}
