package reprise

import (
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/reprise-bench/reprise/internal/chattmpl"
	"github.com/reprise-bench/reprise/internal/servertok"
	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// chatTemplateProbe is the user message the template's tokens are
// measured around: plain words, as synthesized prompts are.
const chatTemplateProbe = "the quick brown fox jumps over the lazy dog"

// applyChatTemplate carries out {Prompts.ApplyChatTemplate}: it measures
// the tokens the model's chat template adds to a request's messages
// ([system?, user]) and takes them off every synthesized prompt, as a
// fixed {Prompts.ISLCorrection}.
func (v *validation) applyChatTemplate() {
	o := v.o
	if !o.Prompts.ApplyChatTemplate {
		return
	}
	switch {
	case v.fixedISL:
		v.bad("Prompts.ApplyChatTemplate", "{Prompts.ApplyChatTemplate} and {Prompts.ISLCorrection} %d both say how many tokens the chat template adds: give one", o.Prompts.ISLCorrection)
		return
	case o.Endpoint != "" && o.Endpoint != "chat":
		v.bad("Prompts.ApplyChatTemplate", "{Prompts.ApplyChatTemplate}: endpoint %s sends no chat messages, so the server applies no chat template (use the chat endpoint, or drop the flag)", o.Endpoint)
		return
	case v.rp.tok == nil:
		return // resolveTokenizer reported why
	}
	n, source, err := chatTemplateTokens(v.rp.tok, o.Prompts.SharedSystemTokens > 0)
	if err != nil {
		v.bad("Prompts.ApplyChatTemplate", "{Prompts.ApplyChatTemplate}: %w", err)
		return
	}
	o.Prompts.ISLCorrection, v.fixedISL = n, true
	v.log.Info("chat template", slog.String("source", source), slog.Int("tokens", n), slog.String("applied as", "isl correction"))
}

// chatTemplateTokens returns the tokens tok's chat template adds to a
// user message (and a system message before it, when system), and where
// the template was read.
func chatTemplateTokens(tok tokenizer.Tokenizer, system bool) (int, string, error) {
	const fix = "give --tokenizer a tokenizer with a chat template (a Hugging Face model id, a model directory, or a tokenizer.json with its tokenizer_config.json), use --tokenizer server with llama.cpp, or say how many tokens the template adds with --isl-correction N instead"
	if st, ok := tok.(*servertok.Tokenizer); ok {
		n, ok := st.ChatTemplateTokens()
		if !ok || system {
			return 0, "", errors.New("the server does not render its chat template for reprise (llama.cpp's /apply-template renders one user message; vLLM, SGLang and TGI render none); " + fix)
		}
		return n, "the server's /apply-template", nil
	}
	path, ok := tokenizer.Path(tok)
	if !ok {
		return 0, "", errors.New("tokenizer " + tok.Name() + " carries no chat template; " + fix)
	}
	tmpl, err := chattmpl.ReadDir(filepath.Dir(path))
	if err != nil {
		if errors.Is(err, chattmpl.ErrNoTemplate) {
			return 0, "", errors.New("tokenizer " + tok.Name() + ": " + err.Error() + "; " + fix)
		}
		return 0, "", err
	}
	msgs := []chattmpl.Message{{Role: "user", Content: chatTemplateProbe}}
	if system {
		msgs = append([]chattmpl.Message{{Role: "system", Content: chatTemplateProbe}}, msgs...)
	}
	n, err := tmpl.Overhead(tok.Count, msgs)
	if err != nil {
		return 0, "", err
	}
	return max(n, 0), tmpl.Source, nil
}
