package reprise

import (
	"errors"
	"fmt"

	"github.com/reprise-bench/reprise/internal/chattmpl"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/servertok"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
)

// chatTemplateProbe is the user message the template's tokens are
// measured around: plain words, as synthesized prompts are.
const chatTemplateProbe = "the quick brown fox jumps over the lazy dog"

// chatTemplateTokens returns the tokens tok's chat template adds to a
// user message, the template (nil for the server's) and where it was
// read.
func chatTemplateTokens(tok tokenizer.Tokenizer) (int, *chattmpl.Template, string, error) {
	const fix = "give --tokenizer a tokenizer with a chat template (a Hugging Face model id, a model directory, a tokenizer.json with its tokenizer_config.json, or a GGUF file), use --tokenizer server with vLLM or llama.cpp, or say how many tokens the template adds with --isl-correction N instead"
	if st, ok := tok.(*servertok.Tokenizer); ok {
		n, ok := st.ChatTemplateTokens()
		if !ok {
			return 0, nil, "", errors.New("the server does not say what its chat template adds (vLLM's /tokenize of messages and llama.cpp's /apply-template do; SGLang and TGI do not); " + fix)
		}
		return n, nil, "the server's tokenizer", nil
	}
	path, ok := tokenizer.Path(tok)
	if !ok {
		return 0, nil, "", fmt.Errorf("tokenizer %s carries no chat template; %s", tok.Name(), fix)
	}
	tmpl, err := chattmpl.ForTokenizer(path)
	if errors.Is(err, chattmpl.ErrNoTemplate) {
		return 0, nil, "", fmt.Errorf("tokenizer %s: %w; %s", tok.Name(), err, fix)
	} else if err != nil {
		return 0, nil, "", err
	}
	n, err := tmpl.Overhead(tok.Count, []chattmpl.Message{{Role: "user", Content: chatTemplateProbe}})
	if err != nil {
		return 0, nil, "", err
	}
	return max(n, 0), tmpl, tmpl.Source, nil
}

// chatFitTries bounds the rebuilds of one prompt: a template that trims
// or merges the prompt's edges changes the count by a token or two, and
// one rebuild fixes it.
const chatFitTries = 3

// chatFit fits synthesized prompts through a chat template: a prompt's
// tokens inside the rendered template differ from its tokens alone where
// the template changes its edges (Llama 3's and Gemma's `| trim`, a
// merge with the text before it), so the measured overhead alone is not
// exact for every prompt.
type chatFit struct {
	tmpl  *chattmpl.Template
	count func(string) int
	// corr is the overhead measured on the probe: the correction of a
	// row that names no template_tokens.
	corr int
}

// refit renders p (row's prompt) as a user message and returns a copy of
// row whose template_tokens make the next build fit, or false when p
// already fits (or the tries are spent, or the template fails: the
// server will say so).
func (c *chatFit) refit(row *trace.Row, p *prompt.Prompt, try int) (*trace.Row, bool) {
	text, err := c.tmpl.Render([]chattmpl.Message{{Role: "user", Content: p.Text}})
	if err != nil || try >= chatFitTries {
		return nil, false
	}
	off := c.tmpl.Count(c.count, text) - row.InputTokens
	if off == 0 {
		return nil, false
	}
	corr := c.corr
	if row.TemplateTokens > 0 {
		corr = row.TemplateTokens
	}
	if corr+off < 1 {
		return nil, false // the builder takes no correction below 1 token
	}
	r := *row
	r.TemplateTokens = corr + off
	return &r, true
}
