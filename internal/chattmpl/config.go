package chattmpl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// MaxConfigBytes bounds the tokenizer_config.json and chat_template.jinja
// files read: real ones are a few hundred kilobytes at most.
const MaxConfigBytes = 16 << 20

// tokenizerConfig is the part of tokenizer_config.json a chat template
// needs.
type tokenizerConfig struct {
	// ChatTemplate is a string, or a list of {name, template} (older
	// multi-template files; "default" is the chat one).
	ChatTemplate json.RawMessage `json:"chat_template"`
	// BOS and EOS are a string or an AddedToken object {"content": …}.
	BOS   json.RawMessage `json:"bos_token"`
	EOS   json.RawMessage `json:"eos_token"`
	Added map[string]struct {
		Content string `json:"content"`
	} `json:"added_tokens_decoder"`
}

// ReadDir returns the chat template of the tokenizer in dir: the
// chat_template of dir/tokenizer_config.json, or, when that has none,
// dir/chat_template.jinja (where transformers ≥ 4.43 saves it). The
// error wraps [ErrNoTemplate] when neither is there, naming the files
// looked at.
func ReadDir(dir string) (*Template, error) {
	confPath := filepath.Join(dir, "tokenizer_config.json")
	data, err := readBounded(confPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var t *Template
	if err == nil {
		t, err = ParseTokenizerConfig(confPath, data, "")
		if err == nil || !errors.Is(err, ErrNoTemplate) {
			return t, err
		}
	}
	jinjaPath := filepath.Join(dir, "chat_template.jinja")
	text, jerr := readBounded(jinjaPath)
	if errors.Is(jerr, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: looked in %s (chat_template) and %s", ErrNoTemplate, confPath, jinjaPath)
	}
	if jerr != nil {
		return nil, jerr
	}
	if data == nil {
		data = []byte("{}")
	}
	return ParseTokenizerConfig(confPath, data, string(text))
}

// ParseTokenizerConfig returns the chat template of a tokenizer_config.json
// read from path, with its bos_token, eos_token and added tokens. text,
// when not "", is the template (a chat_template.jinja) and the file's
// own chat_template is not needed. A file without one returns an error
// wrapping [ErrNoTemplate].
func ParseTokenizerConfig(path string, data []byte, text string) (*Template, error) {
	var c tokenizerConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	source := path
	if text == "" {
		var err error
		if text, err = chatTemplate(c.ChatTemplate); err != nil {
			return nil, fmt.Errorf("%s: chat_template: %w", path, err)
		}
	} else {
		source = filepath.Join(filepath.Dir(path), "chat_template.jinja")
	}
	bos, err := tokenText(c.BOS)
	if err != nil {
		return nil, fmt.Errorf("%s: bos_token: %w", path, err)
	}
	eos, err := tokenText(c.EOS)
	if err != nil {
		return nil, fmt.Errorf("%s: eos_token: %w", path, err)
	}
	added := make([]string, 0, len(c.Added)+2)
	for _, a := range c.Added {
		added = append(added, a.Content)
	}
	added = append(added, bos, eos)
	return Parse(source, text, bos, eos, added)
}

// chatTemplate is the template of a chat_template value.
func chatTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", ErrNoTemplate
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return "", ErrNoTemplate
		}
		return s, nil
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return "", errors.New("want a string or a list of {\"name\", \"template\"}")
	}
	for _, n := range named {
		if n.Name == "default" && n.Template != "" {
			return n.Template, nil
		}
	}
	return "", fmt.Errorf("%w: %d named templates, none named \"default\"", ErrNoTemplate, len(named))
}

// tokenText is the text of a bos_token or eos_token value: a string, an
// AddedToken object, or null.
func tokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", errors.New("want a string or an object with \"content\"")
	}
	return obj.Content, nil
}

// readBounded reads a file of at most MaxConfigBytes.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: over %d bytes: not a tokenizer configuration", path, MaxConfigBytes)
	}
	return data, nil
}

// ForTokenizer returns the chat template of the tokenizer loaded from
// path (a tokenizer.json or a GGUF file): a GGUF file's
// tokenizer.chat_template, else [ReadDir] of the file's directory. The
// error wraps [ErrNoTemplate] when there is none, saying where it looked.
func ForTokenizer(path string) (*Template, error) {
	c, isGGUF, err := tokenizer.ReadGGUFChat(path)
	switch {
	case err != nil:
		return nil, err
	case !isGGUF:
		return ReadDir(filepath.Dir(path))
	case c.Template == "":
		return nil, fmt.Errorf("%w: the GGUF file %s has no tokenizer.chat_template", ErrNoTemplate, path)
	}
	return Parse(path+" (tokenizer.chat_template)", c.Template, c.BOS, c.EOS, append(c.Added, c.BOS, c.EOS))
}

// Open returns the chat template at path: a directory ([ReadDir]), a
// tokenizer.json or GGUF file ([ForTokenizer]); nil and no error for "".
func Open(path string) (*Template, error) {
	if path == "" {
		return nil, nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return ReadDir(path)
	}
	return ForTokenizer(path)
}
