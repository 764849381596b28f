package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/reprise-bench/reprise/internal/hfhub"
)

// LoadConfig says how [LoadContext] finds a model id ("ORG/NAME").
type LoadConfig struct {
	// Revision is the branch, tag or commit of a model id ("" is main).
	// Only a model id has one.
	Revision string
	// Hub downloads a model id's tokenizer.json (and tokenizer_config.json)
	// into the Hugging Face cache when that lacks them; nil looks in the
	// local caches only, as [Load] does.
	Hub *hfhub.Config
	// Downloaded, when not nil, is called for each file fetched from the
	// Hub (not for files found in the cache).
	Downloaded func(hfhub.File)
}

// LoadContext is [Load] with the Hugging Face Hub: a model id ("ORG/NAME")
// that is not a local path is looked up at cfg.Revision in the Hub's cache
// (huggingface_hub's layout, shared with Python tools) and downloaded when
// missing, unless cfg.Hub is nil or offline. Tokenizers the Hub keeps only
// as Python code (trust_remote_code) or as SentencePiece models without a
// tokenizer.json are refused, named in the error.
func LoadContext(ctx context.Context, spec string, cfg LoadConfig) (Tokenizer, error) {
	switch spec {
	case "", "builtin":
		if cfg.Revision != "" {
			return nil, fmt.Errorf("tokenizer %q: a revision (%s) needs a Hugging Face model id (ORG/NAME)", spec, cfg.Revision)
		}
		return Builtin()
	}
	for _, e := range tiktokenEncodings {
		if e.name == spec {
			if cfg.Revision != "" {
				return nil, fmt.Errorf("tokenizer %q: a revision (%s) needs a Hugging Face model id (ORG/NAME)", spec, cfg.Revision)
			}
			return tiktoken(spec)
		}
	}
	if _, err := os.Stat(spec); err == nil || !IsModelID(spec) {
		if cfg.Revision != "" {
			return nil, fmt.Errorf("tokenizer %q: a revision (%s) needs a Hugging Face model id (ORG/NAME), not a file", spec, cfg.Revision)
		}
		return Load(spec)
	}
	path, err := hubTokenizer(ctx, spec, cfg)
	if err != nil {
		return nil, err
	}
	return loadFile(spec, path)
}

// IsModelID reports whether spec has the shape of a Hugging Face model id:
// ORG/NAME (a single-name repository is taken for a file name, and so is
// a NAME ending in .json or .gguf: a mistyped path is not sent to the Hub).
func IsModelID(spec string) bool {
	lower := strings.ToLower(spec)
	return strings.Count(spec, "/") == 1 && hfhub.ValidRepoID(spec) &&
		!strings.HasSuffix(lower, ".json") && !strings.HasSuffix(lower, ".gguf")
}

// hubTokenizer returns the path of a model id's tokenizer.json, from the
// cache or the Hub.
func hubTokenizer(ctx context.Context, id string, cfg LoadConfig) (string, error) {
	var hubs []hfhub.Config
	if cfg.Hub != nil {
		hubs = append(hubs, *cfg.Hub)
	}
	// The caches Load searches, answered from without a request; the
	// configured one first.
	for _, d := range hubDirs() {
		if cfg.Hub == nil || d != cfg.Hub.CacheDir {
			hubs = append(hubs, hfhub.Config{CacheDir: d, Offline: true})
		}
	}
	if cfg.Hub != nil && !cfg.Hub.Offline {
		// Look in every cache before asking the Hub.
		for _, h := range hubs {
			h.Offline = true
			if f, err := h.Download(ctx, hfhub.Model, id, cfg.Revision, "tokenizer.json"); err == nil {
				return f.Path, nil
			}
		}
	}
	var firstErr error
	for _, h := range hubs {
		f, err := h.Download(ctx, hfhub.Model, id, cfg.Revision, "tokenizer.json")
		if err != nil && !errors.Is(err, hfhub.ErrEntryNotFound) {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		// tokenizer_config.json carries the chat template's special
		// tokens and, for a tokenizer without tokenizer.json, says what
		// it is instead; many repositories lack it, and a tokenizer.json
		// is usable without it.
		conf, confErr := h.Download(ctx, hfhub.Model, id, cfg.Revision, "tokenizer_config.json")
		if confErr == nil {
			note(cfg, conf)
		}
		if err == nil {
			note(cfg, f)
			return f.Path, nil
		}
		return "", noTokenizerJSON(id, conf.Path, err)
	}
	if cfg.Revision == "" {
		// A cache without refs/main (a snapshot copied by hand, a
		// download of another branch): the newest snapshot.
		for _, h := range hubs {
			if p, ok := snapshotTokenizer(h.RepoDir(hfhub.Model, id)); ok {
				return p, nil
			}
		}
	}
	if firstErr == nil {
		firstErr = errors.New("no Hugging Face cache directory")
	}
	return "", fmt.Errorf("%w: tokenizer %s: %w", ErrNotFound, id, firstErr)
}

func note(cfg LoadConfig, f hfhub.File) {
	if !f.Cached && cfg.Downloaded != nil {
		cfg.Downloaded(f)
	}
}

// noTokenizerJSON explains a repository without tokenizer.json, naming
// what its tokenizer_config.json says the tokenizer is.
func noTokenizerJSON(id, confPath string, err error) error {
	what := ""
	if confPath != "" {
		if b, rerr := readBounded(confPath, 16<<20); rerr == nil {
			var conf struct {
				TokenizerClass string          `json:"tokenizer_class"`
				AutoMap        json.RawMessage `json:"auto_map"`
			}
			if json.Unmarshal(b, &conf) == nil {
				if auto := autoTokenizer(conf.AutoMap); auto != "" {
					what = fmt.Sprintf("; its tokenizer is Python code in the repository (auto_map AutoTokenizer %s, which needs trust_remote_code): reprise runs no Python", auto)
				} else if conf.TokenizerClass != "" {
					what = fmt.Sprintf("; its tokenizer_config.json names %s, a Python tokenizer without a tokenizer.json", conf.TokenizerClass)
				}
			}
		}
	}
	return fmt.Errorf("%w: tokenizer %s: the repository has no tokenizer.json%s; give --tokenizer a tokenizer.json or a GGUF file of the same model (or a model id that has one): %w",
		ErrUnsupported, id, what, err)
}

// autoTokenizer reads auto_map.AutoTokenizer: a class name, or a list of
// the slow and fast class names.
func autoTokenizer(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	v, ok := m["AutoTokenizer"]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []*string
	if json.Unmarshal(v, &list) == nil {
		var names []string
		for _, x := range list {
			if x != nil {
				names = append(names, *x)
			}
		}
		return strings.Join(names, ", ")
	}
	return ""
}
