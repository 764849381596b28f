package reprise

import (
	"context"
	"log/slog"

	"github.com/reprise-bench/reprise/internal/hfhub"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// loadTokenizer loads the client tokenizer of o (not TokenizerServer):
// a Hugging Face model id from the cache or the Hub (configured by the
// HF_* environment, as huggingface_hub is), with o.TokenizerRevision;
// with o.TokenizerFromModel, the model's tokenizer first. Problems go to
// bad; nil is returned then.
func loadTokenizer(ctx context.Context, o *Options, log *slog.Logger, bad func(field, format string, args ...any)) tokenizer.Tokenizer {
	hub := hfhub.FromEnv()
	cfg := tokenizer.LoadConfig{Revision: o.TokenizerRevision, Hub: &hub, Downloaded: func(f hfhub.File) {
		log.Info("downloaded from the Hugging Face Hub", slog.String("url", f.URL), slog.String("commit", f.Commit), slog.String("path", f.Path))
	}}
	if o.TokenizerFromModel && (o.Tokenizer == "" || o.Tokenizer == DefaultTokenizer) {
		if !tokenizer.IsModelID(o.Model) {
			log.Debug("tokenizer: the model name is no Hugging Face model id (ORG/NAME); counting with the builtin tokenizer (name one with --tokenizer)",
				slog.String("model", o.Model))
		} else if tok, err := tokenizer.LoadContext(ctx, o.Model, cfg); err == nil {
			log.Info("tokenizer of the model", slog.String("model", o.Model), slog.String("tokenizer", tok.Name()))
			return tok
		} else {
			if ctx.Err() != nil {
				bad("Tokenizer", "{Tokenizer}: %w", ctx.Err())
				return nil
			}
			log.Warn("tokenizer: the model's tokenizer cannot be loaded; counting with the builtin tokenizer, so input and output lengths are estimates (name one with --tokenizer)",
				slog.String("model", o.Model), slog.String("error", err.Error()))
		}
		cfg.Revision = ""
	}
	tok, err := tokenizer.LoadContext(ctx, o.Tokenizer, cfg)
	if err != nil {
		bad("Tokenizer", "{Tokenizer} %q: %w", o.Tokenizer, err)
		return nil
	}
	return tok
}
