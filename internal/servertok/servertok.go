// Package servertok learns, from an inference server's own /tokenize
// endpoint, which words are single tokens of the served model, so that
// reprise's prompt synthesis (internal/prompt) builds prompts of exactly
// the asked length for a model whose tokenizer reprise does not have
// (`--tokenizer server`).
//
// What is asked: reprise's candidate words (" word": a space and ASCII
// letters, from the builtin vocabulary, most common first) are sent in
// batches, separated by newlines, so that one /tokenize call gives every
// word's token count and id; the single-token words of each batch are then
// sent joined, as prompts join them, and must come back as exactly one
// token per word with the same ids (else the batch is bisected until the
// words that merge are found). A final check sends a long pseudo-random
// sequence of the learned words. Server shapes: vLLM and SGLang
// ({"prompt"} → {"tokens"}), llama.cpp ({"content"} → {"tokens"}) and TGI
// ({"inputs"} → [{"id"}]), each tried with plain words until one answers
// with tokens (llama.cpp answers a body of another shape with 200 and no
// tokens); special tokens are turned off where the server has the switch.
// A server whose newline is no token (llm-d-inference-sim's placeholder
// tokenizer) is learned by counts instead of ids. A server without
// /tokenize ([ErrNoEndpoint]) is told from one whose tokenizer gives no
// tokens for text ([ErrUnusable]) and from one of an unknown shape
// ([ErrNoShape]).
//
// What is learned is cached per server URL and model in the user's cache
// directory, so a second run asks nothing. The result is a
// [tokenizer.Tokenizer] and [tokenizer.Vocabulary] whose vocabulary is
// the learned words: exact on text made of them (every synthesized
// prompt), and counting other text (responses, prompts a trace carries)
// with a fallback tokenizer, an estimate.
package servertok

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// The errors Load can wrap, telling a server without /tokenize from one
// whose tokenizer is of no use.
var (
	// ErrNoEndpoint: no /tokenize (every shape got 404 or 405, or no
	// connection).
	ErrNoEndpoint = errors.New("the server has no /tokenize endpoint")
	// ErrUnusable: /tokenize answers, but with no token for plain text in
	// every shape it accepts (a placeholder tokenizer).
	ErrUnusable = errors.New("the server's /tokenize returns no tokens for text")
	// ErrNoShape: /tokenize answers, but in none of the known shapes.
	ErrNoShape = errors.New("the server's /tokenize answers none of the known shapes (vLLM/SGLang, llama.cpp, TGI)")
)

// Config says which server to ask.
type Config struct {
	// BaseURL is the server's root (scheme, host and port); /tokenize is
	// asked there.
	BaseURL string
	// Model is the model name sent with each request.
	Model string
	// Header is sent with every request (authorization).
	Header http.Header
	// Client sends the requests; nil uses one with a 30 s timeout.
	Client *http.Client
	// CacheDir holds what was learned; "" uses the user's cache
	// directory (reprise/server-tokenizers), "-" caches nothing.
	CacheDir string
	// Words is how many single-token words to learn (default 4096).
	Words int
	// Fallback counts text that is not made of learned words; nil uses
	// the builtin tokenizer.
	Fallback tokenizer.Tokenizer
}

// Info says what Load did.
type Info struct {
	// Shape is the /tokenize dialect the server answered: "vllm" (also
	// SGLang and the mock server), "llamacpp" or "tgi".
	Shape string
	// CountOnly is true when the server's newline is no token: the words
	// were learned by counts, which are exact; their ids are reprise's
	// numbering (0…n-1), not the server's.
	CountOnly bool
	// Cached is true when nothing was asked: the words came from the cache.
	Cached bool
	// Requests counts the /tokenize calls made.
	Requests int
	// CachePath is the cache file read or written ("" without a cache).
	CachePath string
}

// learned is what is cached: the words with their server ids, and whether
// a prompt's first word goes without its space (SentencePiece servers,
// which prepend one themselves).
type learned struct {
	Version int    `json:"v"`
	URL     string `json:"url"`
	Model   string `json:"model"`
	Shape   string `json:"shape"`
	// CountOnly: learned by counts; the ids are the server's for the words
	// in one context only (see client.countOnly).
	CountOnly  bool     `json:"count_only,omitempty"`
	StripFirst bool     `json:"strip_first"`
	Words      []string `json:"words"`
	IDs        []int    `json:"ids"`
	// ChatTemplate is the tokens the chat template adds to a one-message
	// chat request; -1 when the server does not say.
	ChatTemplate int    `json:"chat_template_tokens"`
	LearnedAt    string `json:"learned_at"`
}

// cacheVersion 3: llama.cpp servers learn their chat template, count-only
// learning; an older cache is learned again.
const cacheVersion = 3

// MinWords is the fewest single-token words Load accepts (the prompt
// builder's minimum).
const MinWords = 64

// Load returns the server's tokenizer as far as reprise needs it, from the
// cache or by asking the server.
func Load(ctx context.Context, cfg Config) (*Tokenizer, Info, error) {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Words <= 0 {
		cfg.Words = 4096
	}
	if cfg.Fallback == nil {
		fb, err := tokenizer.Builtin()
		if err != nil {
			return nil, Info{}, err
		}
		cfg.Fallback = fb
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	var info Info
	path, err := cachePath(cfg)
	if err != nil {
		return nil, info, err
	}
	info.CachePath = path
	if path != "" {
		if l, ok := readCache(path, cfg); ok {
			info.Shape, info.Cached, info.CountOnly = l.Shape, true, l.CountOnly
			return newTokenizer(l, cfg.Fallback), info, nil
		}
	}
	c := &client{cfg: cfg}
	l, err := c.learn(ctx)
	info.Requests = c.requests
	if err != nil {
		return nil, info, err
	}
	info.Shape, info.CountOnly = l.Shape, l.CountOnly
	if path != "" {
		if err := writeCache(path, l); err != nil {
			return nil, info, fmt.Errorf("server tokenizer cache: %w", err)
		}
	}
	return newTokenizer(l, cfg.Fallback), info, nil
}

// newTokenizer returns the tokenizer of what was learned, l, which
// encodes other text with fb; its identity is a hash of l's (id, word)
// pairs.
func newTokenizer(l *learned, fb tokenizer.Tokenizer) *Tokenizer {
	t := &Tokenizer{name: "server:" + l.Model + "@" + l.URL, ids: make(map[string]int, len(l.Words)),
		pieces: make(map[int]string, len(l.Words)), stripFirst: l.StripFirst, fallback: fb, chat: l.ChatTemplate}
	h := sha256.New()
	var n [8]byte
	for i, w := range l.Words {
		id := l.IDs[i]
		t.ids[w], t.pieces[id] = id, w
		t.size = max(t.size, id+1)
		binary.LittleEndian.PutUint64(n[:], uint64(id))
		h.Write(n[:])
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	t.identity = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return t
}

// chatTemplate asks how many tokens the server's chat template adds to a
// one-message chat request: the count of the templated request (a user
// message of a few words, with the template and its special tokens, as a
// chat request's usage.prompt_tokens counts it) minus the count of the
// same words alone. vLLM-shaped servers count /tokenize's messages form;
// llama.cpp renders the template at /apply-template, whose text is then
// tokenized with special tokens, as its chat endpoint does. -1 when the
// server does not say.
func (c *client) chatTemplate(ctx context.Context) int {
	const words = " the quick brown fox"
	plain, err := c.tokenizeAs(ctx, c.shape, words)
	if err != nil {
		return -1
	}
	messages := []map[string]string{{"role": "user", "content": words}}
	var ids []int
	switch c.shape {
	case "vllm":
		chat, err := c.post(ctx, "/tokenize", map[string]any{"model": c.cfg.Model, "messages": messages, "add_generation_prompt": true})
		if err != nil {
			return -1
		}
		if ids, err = parseTokens("vllm", chat); err != nil {
			return -1
		}
	case "llamacpp":
		out, err := c.post(ctx, "/apply-template", map[string]any{"messages": messages})
		if err != nil {
			return -1
		}
		var v struct {
			Prompt *string `json:"prompt"`
		}
		if json.Unmarshal(out, &v) != nil || v.Prompt == nil {
			return -1
		}
		chat, err := c.post(ctx, "/tokenize", map[string]any{"content": *v.Prompt, "add_special": true, "parse_special": true})
		if err != nil {
			return -1
		}
		if ids, err = parseTokens("llamacpp", chat); err != nil {
			return -1
		}
	default:
		return -1
	}
	if len(ids) < len(plain) {
		return -1
	}
	return len(ids) - len(plain)
}

// cachePath is the cache file of (URL, model); "" when caching is off.
func cachePath(cfg Config) (string, error) {
	dir := cfg.CacheDir
	switch dir {
	case "-":
		return "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", nil // no cache directory: ask every time
		}
		dir = filepath.Join(base, "reprise", "server-tokenizers")
	}
	sum := sha256.Sum256([]byte(cfg.BaseURL + "\x00" + cfg.Model))
	return filepath.Join(dir, hex.EncodeToString(sum[:8])+".json"), nil
}

func readCache(path string, cfg Config) (*learned, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var l learned
	if json.Unmarshal(data, &l) != nil || l.Version != cacheVersion || l.URL != cfg.BaseURL || l.Model != cfg.Model ||
		len(l.Words) != len(l.IDs) || len(l.Words) < MinWords {
		return nil, false // another format, a hash collision or a damaged file: learn again
	}
	return &l, true
}

func writeCache(path string, l *learned) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tok-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// client asks one server.
type client struct {
	cfg      Config
	shape    string
	requests int
	// countOnly compares counts, not ids: a server whose newline is no
	// token (llm-d-inference-sim's placeholder, which names each word by
	// its text and the whitespace around it, so a word's id depends on
	// what follows) is learned by counts; its ids are not exact.
	countOnly bool
}

// same reports whether got is the tokenization want expects: the same
// ids, or in countOnly mode as many.
func (c *client) same(got, want []int) bool {
	if c.countOnly {
		return len(got) == len(want)
	}
	return slices.Equal(got, want)
}

// shapes are the /tokenize dialects, tried in this order.
var shapes = []string{"vllm", "llamacpp", "tgi"}

// probeText is what finds the dialect: plain words, which any tokenizer
// turns into tokens. A newline alone is no probe: llama.cpp answers a body
// of another shape ({"prompt": …}) with 200 and no tokens, and
// llm-d-inference-sim's placeholder tokenizer gives no token for it.
const probeText = " the quick brown fox"

// detect finds the dialect: the first shape whose answer to probeText
// holds tokens. Every shape is tried before concluding, and the error
// says what each answered.
func (c *client) detect(ctx context.Context) error {
	var said []string
	empty, missing := 0, 0
	for _, s := range shapes {
		ids, err := c.tokenizeAs(ctx, s, probeText)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var he *httpError
		switch {
		case err == nil && len(ids) > 0:
			c.shape = s
			return nil
		case err == nil:
			empty++
			said = append(said, s+": 200 with no tokens")
		case errors.As(err, &he) && (he.status == http.StatusNotFound || he.status == http.StatusMethodNotAllowed):
			missing++
			said = append(said, s+": "+err.Error())
		case !errors.As(err, &he) && !errors.Is(err, errShape):
			missing++ // no connection: nothing answers
			said = append(said, s+": "+err.Error())
		default:
			said = append(said, s+": "+err.Error())
		}
	}
	const instead = "use a tokenizer file instead (--tokenizer FILE, a tokenizer.json or GGUF, or the model's Hugging Face id)"
	switch {
	case empty > 0:
		return fmt.Errorf("%s/tokenize of %q: %w (%s); the server's tokenizer is a placeholder (llm-d-inference-sim without its model's tokenizer?); %s",
			c.cfg.BaseURL, probeText, ErrUnusable, strings.Join(said, "; "), instead)
	case missing == len(shapes):
		return fmt.Errorf("%s/tokenize: %w (%s); %s", c.cfg.BaseURL, ErrNoEndpoint, strings.Join(said, "; "), instead)
	}
	return fmt.Errorf("%s/tokenize: %w: %s; %s", c.cfg.BaseURL, ErrNoShape, strings.Join(said, "; "), instead)
}

// tokenize returns the server's token ids of text, without special tokens
// where the server has the switch. The first call finds the dialect.
func (c *client) tokenize(ctx context.Context, text string) ([]int, error) {
	if c.shape == "" {
		if err := c.detect(ctx); err != nil {
			return nil, err
		}
	}
	return c.tokenizeAs(ctx, c.shape, text)
}

// httpError is an answer other than 200.
type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

// errShape marks a 200 whose body is not the dialect's.
var errShape = errors.New("not this shape")

func (c *client) tokenizeAs(ctx context.Context, shape, text string) ([]int, error) {
	var body any
	switch shape {
	case "vllm":
		body = map[string]any{"model": c.cfg.Model, "prompt": text, "add_special_tokens": false}
	case "llamacpp":
		body = map[string]any{"content": text, "add_special": false, "parse_special": false}
	case "tgi":
		body = map[string]any{"inputs": text, "parameters": map[string]any{}}
	}
	out, err := c.post(ctx, "/tokenize", body)
	if err != nil {
		return nil, err
	}
	return parseTokens(shape, out)
}

// post sends body to path (/tokenize) and returns the answer of a 200.
func (c *client) post(ctx context.Context, path string, body any) ([]byte, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+path, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	for k, v := range c.cfg.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	c.requests++
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{status: resp.StatusCode, body: clip(out)}
	}
	return out, nil
}

// parseTokens reads the ids of a /tokenize answer in one dialect.
func parseTokens(shape string, out []byte) ([]int, error) {
	switch shape {
	case "tgi":
		var items []struct {
			ID *int `json:"id"`
		}
		if err := json.Unmarshal(out, &items); err != nil {
			return nil, fmt.Errorf("%w: want [{\"id\": …}, …]: %s", errShape, clip(out))
		}
		ids := make([]int, len(items))
		for i, it := range items {
			if it.ID == nil {
				return nil, fmt.Errorf("item %d has no id: %s", i, clip(out))
			}
			ids[i] = *it.ID
		}
		return ids, nil
	default:
		var v struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		if err := json.Unmarshal(out, &v); err != nil || v.Tokens == nil {
			return nil, fmt.Errorf("%w: want {\"tokens\": [...]}: %s", errShape, clip(out))
		}
		ids := make([]int, len(v.Tokens))
		for i, t := range v.Tokens {
			// llama.cpp with pieces gives {"id", "piece"}; else ids.
			var id int
			if err := json.Unmarshal(t, &id); err != nil {
				var p struct {
					ID *int `json:"id"`
				}
				if json.Unmarshal(t, &p) != nil || p.ID == nil {
					return nil, fmt.Errorf("tokens[%d] is neither an id nor {\"id\"}: %s", i, clip(out))
				}
				id = *p.ID
			}
			ids[i] = id
		}
		return ids, nil
	}
}

func clip(b []byte) string {
	const n = 200
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// batchSize is how many candidate words one /tokenize call classifies.
const batchSize = 512

// learn asks the server for single-token words.
func (c *client) learn(ctx context.Context) (*learned, error) {
	cands, err := candidates(c.cfg.Fallback)
	if err != nil {
		return nil, err
	}
	// The separator's id: a newline is its own pre-token before " word"
	// in byte-level and SentencePiece tokenizers alike.
	sepIDs, err := c.tokenize(ctx, "\n")
	if err != nil {
		return nil, err
	}
	// A tokenizer that gives a newline no token (llm-d-inference-sim's
	// placeholder splits words only) is classified by counts instead.
	sep := -1
	if len(sepIDs) > 0 {
		sep = sepIDs[len(sepIDs)-1]
	} else {
		c.countOnly = true
	}
	l := &learned{Version: cacheVersion, URL: c.cfg.BaseURL, Model: c.cfg.Model, LearnedAt: time.Now().UTC().Format(time.RFC3339)}
	modeSet := false
	for start := 0; start < len(cands) && len(l.Words) < c.cfg.Words; start += batchSize {
		batch := cands[start:min(start+batchSize, len(cands))]
		single, ids, err := c.classify(ctx, batch, sep)
		if err != nil {
			return nil, err
		}
		if len(single) == 0 {
			continue
		}
		if !modeSet {
			// SentencePiece servers prepend a space to the text: the
			// first word then goes without its own.
			strip, ok, err := c.decideStrip(ctx, single, ids)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			l.StripFirst, modeSet = strip, true
		}
		words, wids, err := c.joined(ctx, single, ids, l.StripFirst)
		if err != nil {
			return nil, err
		}
		l.Words, l.IDs = append(l.Words, words...), append(l.IDs, wids...)
	}
	l.Shape, l.CountOnly = c.shape, c.countOnly
	l.ChatTemplate = c.chatTemplate(ctx)
	if len(l.Words) < MinWords {
		return nil, fmt.Errorf("%s/tokenize: only %d of reprise's %d candidate words are single tokens of model %q (%d needed); use a tokenizer file instead (--tokenizer FILE, a tokenizer.json or GGUF)",
			c.cfg.BaseURL, len(l.Words), len(cands), c.cfg.Model, MinWords)
	}
	if len(l.Words) > c.cfg.Words {
		l.Words, l.IDs = l.Words[:c.cfg.Words], l.IDs[:c.cfg.Words]
	}
	if err := c.verify(ctx, l); err != nil {
		return nil, err
	}
	if l.CountOnly {
		// The server's ids of such a tokenizer are not stable (and
		// llm-d-inference-sim's are 32-bit hashes): number the words
		// 0…n-1, a vocabulary of their size.
		for i := range l.IDs {
			l.IDs[i] = i
		}
	}
	return l, nil
}

// candidates are the builtin vocabulary's " word" pieces in id order.
func candidates(fb tokenizer.Tokenizer) ([]string, error) {
	v, ok := fb.(tokenizer.Vocabulary)
	if !ok {
		return nil, fmt.Errorf("tokenizer %s does not list its vocabulary", fb.Name())
	}
	var out []string
	seen := map[string]bool{}
	for id := range v.VocabSize() {
		p, ok := v.Piece(id)
		if ok && isWordPiece(p) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// isWordPiece reports whether p is " " followed by 2..15 ASCII letters
// (the prompt builder's word shape).
func isWordPiece(p string) bool {
	if len(p) < 3 || len(p) > 16 || p[0] != ' ' {
		return false
	}
	for i := 1; i < len(p); i++ {
		if c := p[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// classify tokenizes the batch as "\n w1\n w2…" and returns the words that
// are one token there, with their ids.
func (c *client) classify(ctx context.Context, batch []string, sep int) ([]string, []int, error) {
	if sep < 0 {
		return c.classifyByCount(ctx, batch)
	}
	var b strings.Builder
	for _, w := range batch {
		b.WriteByte('\n')
		b.WriteString(w)
	}
	ids, err := c.tokenize(ctx, b.String())
	if err != nil {
		return nil, nil, err
	}
	// Segments between separators, the text's first separator included
	// (a SentencePiece server may put a "▁" before it).
	first := slices.Index(ids, sep)
	if first < 0 {
		return nil, nil, fmt.Errorf("%s/tokenize: the newline separator did not come back as its own token; use a tokenizer file instead (--tokenizer FILE)", c.cfg.BaseURL)
	}
	var single []string
	var sids []int
	seg := ids[first+1:]
	for i := range batch {
		end := slices.Index(seg, sep)
		if end < 0 {
			end = len(seg)
		}
		if i == len(batch)-1 && end != len(seg) {
			return nil, nil, fmt.Errorf("%s/tokenize: more newline tokens than newlines came back; use a tokenizer file instead (--tokenizer FILE)", c.cfg.BaseURL)
		}
		if end == 1 {
			single, sids = append(single, batch[i]), append(sids, seg[0])
		}
		if end < len(seg) {
			seg = seg[end+1:]
		} else {
			seg = nil
		}
	}
	return single, sids, nil
}

// classifyByCount classifies without a separator token: a batch sent
// joined as prompts join it (" w1 w2…") that comes back as one token per
// word has each word as one token, in order (every word gives at least
// one); another batch is halved until that holds or one word is left.
// The ids are those of the words as prompts hold them (llm-d-inference-
// sim's placeholder names a word by its text with the whitespace before
// it, so "\n w" and " w" differ). The joined and verify checks that
// follow catch a tokenizer for which the deduction is wrong.
func (c *client) classifyByCount(ctx context.Context, batch []string) ([]string, []int, error) {
	if len(batch) == 0 {
		return nil, nil, nil
	}
	ids, err := c.tokenize(ctx, strings.Join(batch, ""))
	if err != nil {
		return nil, nil, err
	}
	if len(ids) == len(batch) {
		return batch, ids, nil
	}
	if len(batch) == 1 || len(ids) < len(batch)/4 {
		// One word of several tokens, or a batch mostly of words giving
		// no token: a bisection would ask for little.
		return nil, nil, nil
	}
	h := len(batch) / 2
	w1, i1, err := c.classifyByCount(ctx, batch[:h])
	if err != nil {
		return nil, nil, err
	}
	w2, i2, err := c.classifyByCount(ctx, batch[h:])
	if err != nil {
		return nil, nil, err
	}
	return append(w1, w2...), append(i1, i2...), nil
}

// decideStrip finds whether prompts must drop their first space: a
// server that prepends one (SentencePiece) tokenizes " w1 w2…" with an
// extra token, and "w1 w2…" with one per word. ok is false when neither
// matches (the batch's words merge when joined; try the next batch).
func (c *client) decideStrip(ctx context.Context, words []string, ids []int) (strip, ok bool, err error) {
	n := min(len(words), 32)
	text := strings.Join(words[:n], "")
	got, err := c.tokenize(ctx, text)
	if err != nil {
		return false, false, err
	}
	if c.same(got, ids[:n]) {
		return false, true, nil
	}
	got, err = c.tokenize(ctx, text[1:])
	if err != nil {
		return false, false, err
	}
	return true, c.same(got, ids[:n]), nil
}

// joined keeps the words that stay one token each, with the same ids,
// when sent joined as prompts join them; a batch that does not is bisected
// until the words that merge with a neighbour are left out.
func (c *client) joined(ctx context.Context, words []string, ids []int, strip bool) ([]string, []int, error) {
	if len(words) == 0 {
		return nil, nil, nil
	}
	text := strings.Join(words, "")
	if strip {
		text = text[1:]
	}
	got, err := c.tokenize(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	if c.same(got, ids) {
		return words, ids, nil
	}
	if len(words) == 1 {
		return nil, nil, nil
	}
	h := len(words) / 2
	w1, i1, err := c.joined(ctx, words[:h], ids[:h], strip)
	if err != nil {
		return nil, nil, err
	}
	w2, i2, err := c.joined(ctx, words[h:], ids[h:], strip)
	if err != nil {
		return nil, nil, err
	}
	return append(w1, w2...), append(i1, i2...), nil
}

// verify sends a long pseudo-random sequence of the learned words (each
// word next to many others, and next to itself) and checks one token per
// word with the learned ids: what every synthesized prompt relies on.
func (c *client) verify(ctx context.Context, l *learned) error {
	n := len(l.Words)
	var b strings.Builder
	var want []int
	x := uint64(0x9e3779b97f4a7c15)
	for i := range 3 * n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(n))
		if i%7 == 0 {
			j = (i / 7) % n // every word twice in a row, in turn
			b.WriteString(l.Words[j])
			want = append(want, l.IDs[j])
		}
		b.WriteString(l.Words[j])
		want = append(want, l.IDs[j])
	}
	text := b.String()
	if l.StripFirst {
		text = text[1:]
	}
	got, err := c.tokenize(ctx, text)
	if err != nil {
		return err
	}
	if !c.same(got, want) {
		at := 0
		for at < len(got) && at < len(want) && got[at] == want[at] {
			at++
		}
		return fmt.Errorf("%s/tokenize: a sequence of %d learned single-token words came back as %d tokens (first difference at token %d): the server's tokenizer merges across words; use a tokenizer file instead (--tokenizer FILE, a tokenizer.json or GGUF)",
			c.cfg.BaseURL, len(want), len(got), at)
	}
	return nil
}
