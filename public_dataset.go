package reprise

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reprise-bench/reprise/internal/hfdataset"
	"github.com/reprise-bench/reprise/internal/hfhub"
	"github.com/reprise-bench/reprise/trace"
)

// publicDataset is one of AIPerf's --public-dataset names that reprise
// reads: a file of a Hugging Face dataset repository and its format, or
// (hub) a split of the Hub's Parquet conversion and how its rows become
// prompts (design 0028).
type publicDataset struct {
	repo, file, format string
	allTurns           bool
	hub                *hfdataset.Spec
}

// blazeditTemplate is AIPerf's prompt of the blazedit datasets (vLLM's
// BlazeditDataset format).
const blazeditTemplate = "Given a code file, please apply the change requests and generate the new file.\n\n" +
	"Original file:\n```python\n{code}\n```\n\nChange request:\n{change_request}\n\n" +
	"Please generate the new code file in the \"New file\" section below."

// publicDatasets are the names reprise takes: AIPerf's text datasets
// (its plugins.yaml, public_dataset_loader). AIPerf's others are
// multimodal, speech or agentic-trace sets, or not on the Hub
// (spec_bench); docs/format/cli.md says why each is left out.
var publicDatasets = map[string]publicDataset{
	// AIPerf's dataset/loader/sharegpt.py: every human→gpt pair is a turn
	// of one session, sent with the live replies.
	"sharegpt": {repo: "anon8231489123/ShareGPT_Vicuna_unfiltered", file: "ShareGPT_V3_unfiltered_cleaned_split.json", format: "sharegpt", allTurns: true},
	// HFInstructionResponseDatasetLoader: a prompt column (or template) a row.
	"aimo":              {hub: &hfdataset.Spec{Repo: "AI-MO/NuminaMath-TIR", Split: "train", Prompt: "problem"}},
	"aimo_aime":         {hub: &hfdataset.Spec{Repo: "AI-MO/aimo-validation-aime", Split: "train", Prompt: "problem"}},
	"aimo_numina_cot":   {hub: &hfdataset.Spec{Repo: "AI-MO/NuminaMath-CoT", Split: "train", Prompt: "problem"}},
	"aimo_numina_1_5":   {hub: &hfdataset.Spec{Repo: "AI-MO/NuminaMath-1.5", Split: "train", Prompt: "problem"}},
	"spec_al_gsm8k":     {hub: &hfdataset.Spec{Repo: "openai/gsm8k", Config: "main", Split: "test", Prompt: "question"}},
	"spec_al_math500":   {hub: &hfdataset.Spec{Repo: "HuggingFaceH4/MATH-500", Split: "test", Prompt: "problem"}},
	"spec_al_humaneval": {hub: &hfdataset.Spec{Repo: "openai/openai_humaneval", Config: "openai_humaneval", Split: "test", Prompt: "prompt"}},
	"spec_al_mbpp":      {hub: &hfdataset.Spec{Repo: "google-research-datasets/mbpp", Config: "full", Split: "test", Prompt: "text"}},
	"instruct_coder":    {hub: &hfdataset.Spec{Repo: "likaixin/InstructCoder", Split: "train", Prompt: "instruction"}},
	"blazedit_5k":       {hub: &hfdataset.Spec{Repo: "vdaita/edit_5k_char", Split: "train", Template: blazeditTemplate}},
	"blazedit_10k":      {hub: &hfdataset.Spec{Repo: "vdaita/edit_10k_char", Split: "train", Template: blazeditTemplate}},
	// MT-Bench: the list column prompt holds a session's user turns.
	"spec_al_mtbench": {hub: &hfdataset.Spec{Repo: "HuggingFaceH4/mt_bench_prompts", Split: "train", Turns: "prompt"}},
}

// PublicDatasetNames returns the names Options.Trace.PublicDataset takes,
// sorted. The caller owns the slice.
func PublicDatasetNames() []string {
	names := make([]string, 0, len(publicDatasets))
	for n := range publicDatasets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// resolvePublicDataset points o.Trace at the cached file of
// o.Trace.PublicDataset, downloading it from the Hub (HF_* environment)
// when the Hugging Face cache lacks it. Problems go to bad.
func resolvePublicDataset(ctx context.Context, o *Options, log *slog.Logger, bad func(field, format string, args ...any)) {
	name := o.Trace.PublicDataset
	if name == "" {
		if o.Trace.PublicSubset != "" {
			bad("Trace.PublicSubset", "{Trace.PublicSubset} %q needs {Trace.PublicDataset}: it picks the subset of a Hub dataset", o.Trace.PublicSubset)
		}
		if len(o.Trace.PublicFilters) > 0 {
			bad("Trace.PublicFilters", "{Trace.PublicFilters} needs {Trace.PublicDataset}: it keeps rows of a Hub dataset (for a file, filter it first and give it as the trace)")
		}
		return
	}
	d, ok := publicDatasets[name]
	if !ok {
		bad("Trace.PublicDataset", "{Trace.PublicDataset} %q: reprise reads %s; for another dataset download its file and give it as the trace (a JSON/JSONL/CSV/Parquet table with {Trace.Columns})",
			name, strings.Join(PublicDatasetNames(), ", "))
		return
	}
	if o.Trace.Path != "" || o.Trace.Reader != nil {
		bad("Trace.PublicDataset", "{Trace.PublicDataset} %q and {Trace.Path}: give one", name)
		return
	}
	var filters []hfdataset.Filter
	for _, s := range o.Trace.PublicFilters {
		f, err := hfdataset.ParseFilter(s)
		if err != nil {
			bad("Trace.PublicFilters", "{Trace.PublicFilters}: %w", err)
			return
		}
		filters = append(filters, f)
	}
	if d.hub == nil && (o.Trace.PublicSubset != "" || len(filters) > 0) {
		bad("Trace.PublicSubset", "{Trace.PublicSubset} and {Trace.PublicFilters} apply to the datasets read from the Hub's Parquet conversion; %s is one JSON file, read whole", name)
		return
	}
	hub := hfhub.FromEnv()
	if d.hub != nil {
		resolveHubDataset(ctx, o, hub, *d.hub, filters, log, bad)
		return
	}
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

// resolveHubDataset makes (or reuses) the prompt file of a split of the
// Hub's Parquet conversion and points o.Trace at it: a table whose rows
// are prompts, and for a turns dataset sessions, without output lengths.
func resolveHubDataset(ctx context.Context, o *Options, hub hfhub.Config, spec hfdataset.Spec, filters []hfdataset.Filter, log *slog.Logger, bad func(field, format string, args ...any)) {
	name := o.Trace.PublicDataset
	if o.Trace.PublicSubset != "" {
		spec.Config = o.Trace.PublicSubset
	}
	log.Info("public dataset", slog.String("name", name), slog.String("repo", spec.Repo), slog.String("subset", cmp.Or(spec.Config, hfdataset.DefaultConfig)),
		slog.String("split", spec.Split), slog.String("cache", hub.RepoDir(hfhub.Dataset, spec.Repo)))
	res, err := hfdataset.Prepare(ctx, hub, spec, filters, publicDatasetDir())
	switch {
	case errors.Is(err, hfdataset.ErrSubset):
		bad("Trace.PublicSubset", "{Trace.PublicDataset} %s: %w (give one with {Trace.PublicSubset})", name, err)
		return
	case errors.Is(err, hfdataset.ErrFilterKey):
		bad("Trace.PublicFilters", "{Trace.PublicFilters} of %s: %w", name, err)
		return
	case err != nil:
		bad("Trace.PublicDataset", "{Trace.PublicDataset} %s: %w", name, err)
		return
	}
	if res.Cached {
		log.Info("public dataset prompts reused", slog.String("path", res.Path))
	} else {
		log.Info("public dataset prompts written", slog.String("path", res.Path), slog.String("commit", res.Commit),
			slog.Int("shards", len(res.Shards)), slog.Int("rows", res.Rows), slog.Int("kept", res.Kept))
		if res.Kept == 0 {
			os.Remove(res.Path) // not reused by the next run
			bad("Trace.PublicFilters", "{Trace.PublicDataset} %s: none of its %d rows is kept (by {Trace.PublicFilters} %s, or all prompts empty)", name, res.Rows, strings.Join(o.Trace.PublicFilters, " "))
			return
		}
	}
	o.Trace.Path = res.Path
	o.Trace.Format = string(trace.FormatTable)
	o.Trace.Columns = trace.Columns{Prompt: "prompt"}
	if spec.Turns != "" {
		o.Trace.Columns.Session = "session_id"
	}
}

// publicDatasetDir is the folder of the prompt files made from Hub
// datasets: reprise/hf-datasets in the user's cache folder (beside, never
// inside, the Hugging Face cache).
func publicDatasetDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "reprise", "hf-datasets")
}
