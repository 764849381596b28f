package accuracy

import (
	"context"
	"log/slog"

	"github.com/reprise-bench/reprise/internal/hfhub"
)

// HubDownload returns a LoadOptions.Download that fetches dataset files
// from the Hugging Face Hub into hub's cache (the huggingface_hub layout:
// a file already cached is not asked for again), logging to log.
func HubDownload(hub hfhub.Config, log *slog.Logger) func(ctx context.Context, repo, revision, file string) (string, error) {
	return func(ctx context.Context, repo, revision, file string) (string, error) {
		log.Info("accuracy benchmark", slog.String("repo", repo), slog.String("file", file), slog.String("cache", hub.RepoDir(hfhub.Dataset, repo)))
		f, err := hub.Download(ctx, hfhub.Dataset, repo, revision, file)
		if err != nil {
			return "", err
		}
		if !f.Cached {
			log.Info("downloaded from the Hugging Face Hub", slog.String("url", f.URL), slog.String("commit", f.Commit), slog.String("path", f.Path))
		}
		return f.Path, nil
	}
}
