package tokenizer

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Load returns the tokenizer named by spec, without network access:
//
//   - "builtin" or "": [Builtin] (o200k_base); "o200k_base", "cl100k_base",
//     "p50k_base" and "r50k_base" name the embedded tiktoken vocabularies;
//   - a path to a Hugging Face tokenizer.json file;
//   - a path to a GGUF model file (llama.cpp's format), whose metadata
//     carries the tokenizer: byte-level BPE ("gpt2" models: Llama 3,
//     Qwen 2/3 and most current models) with a pre-tokenizer of llama3,
//     qwen2 or gpt-2 (see gguf.go); only the metadata at the head of the
//     file is read;
//   - a path to a model directory containing tokenizer.json;
//   - a model id ("org/name") already downloaded to the local Hugging Face
//     cache: $HF_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub
//     and ~/.cache/huggingface/hub are searched, in that order, for
//     models--org--name/snapshots/*/tokenizer.json (the snapshot named by
//     refs/main first).
//
// A spec that resolves to nothing returns an error wrapping [ErrNotFound]
// that lists every place searched. A tokenizer.json using a feature this
// package does not implement returns an error wrapping [ErrUnsupported].
// Loading the same file twice returns the same shared tokenizer.
func Load(spec string) (Tokenizer, error) {
	switch spec {
	case "", "builtin":
		return Builtin()
	}
	for _, e := range tiktokenEncodings {
		if e.name == spec {
			return tiktoken(spec)
		}
	}
	path, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	return loadFile(spec, path)
}

var loaded sync.Map // absolute tokenizer.json or GGUF path → *bpe

// isGGUF reports whether the file at path starts with GGUF's magic.
func isGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "GGUF"
}

func loadFile(name, path string) (Tokenizer, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if t, ok := loaded.Load(abs); ok {
		return t.(*bpe), nil
	}
	var t *bpe
	if isGGUF(path) {
		t, err = loadGGUF(name, path)
	} else {
		var data []byte
		if data, err = readBounded(path, MaxFileBytes); err != nil {
			return nil, fmt.Errorf("tokenizer %s: %w", name, err)
		}
		t, err = parseHF(name, data)
	}
	if err != nil {
		return nil, err
	}
	t.path = abs
	actual, _ := loaded.LoadOrStore(abs, t)
	return actual.(*bpe), nil
}

// Path returns the absolute path of the tokenizer.json or GGUF file t
// was loaded from, and false for a tokenizer of no file (the embedded
// vocabularies, another package's tokenizer). The chat template lives
// next to that file (tokenizer_config.json) or in it (GGUF).
func Path(t Tokenizer) (string, bool) {
	b, ok := t.(*bpe)
	if !ok || b.path == "" {
		return "", false
	}
	return b.path, true
}

// resolve maps a spec that is not a builtin name to a tokenizer.json path.
func resolve(spec string) (string, error) {
	var looked []string
	if fi, err := os.Stat(spec); err == nil {
		if !fi.IsDir() {
			return spec, nil
		}
		p := filepath.Join(spec, "tokenizer.json")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		return "", fmt.Errorf("%w: directory %s has no tokenizer.json", ErrNotFound, spec)
	}
	looked = append(looked, spec+" (no such file or directory)")
	if strings.Count(spec, "/") == 1 && !strings.HasPrefix(spec, "/") && !strings.HasPrefix(spec, ".") {
		repo := "models--" + strings.ReplaceAll(spec, "/", "--")
		for _, hub := range hubDirs() {
			dir := filepath.Join(hub, repo)
			if p, ok := snapshotTokenizer(dir); ok {
				return p, nil
			}
			looked = append(looked, filepath.Join(dir, "snapshots", "*", "tokenizer.json"))
		}
	}
	return "", fmt.Errorf("%w: %q is not a builtin name (builtin, o200k_base, cl100k_base, p50k_base, r50k_base), a tokenizer.json, a model directory or a model id in the local Hugging Face cache; looked in: %s (download it first, e.g. `hf download %s tokenizer.json`)",
		ErrNotFound, spec, strings.Join(looked, ", "), spec)
}

// hubDirs lists the Hugging Face hub cache directories in the order the
// huggingface_hub library would choose them, without duplicates.
func hubDirs() []string {
	var dirs []string
	add := func(d string) {
		if d == "" {
			return
		}
		for _, x := range dirs {
			if x == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	add(os.Getenv("HF_HUB_CACHE"))
	add(os.Getenv("HUGGINGFACE_HUB_CACHE"))
	if h := os.Getenv("HF_HOME"); h != "" {
		add(filepath.Join(h, "hub"))
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		add(filepath.Join(x, "huggingface", "hub"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, ".cache", "huggingface", "hub"))
	}
	return dirs
}

// snapshotTokenizer finds tokenizer.json in a cached model repository:
// the snapshot refs/main points to, else the most recently modified one.
func snapshotTokenizer(repoDir string) (string, bool) {
	if ref, err := os.ReadFile(filepath.Join(repoDir, "refs", "main")); err == nil {
		p := filepath.Join(repoDir, "snapshots", strings.TrimSpace(string(ref)), "tokenizer.json")
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	matches, _ := filepath.Glob(filepath.Join(repoDir, "snapshots", "*", "tokenizer.json"))
	type cand struct {
		path string
		mod  int64
	}
	var cands []cand
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		cands = append(cands, cand{m, fi.ModTime().UnixNano()})
	}
	if len(cands) == 0 {
		return "", false
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod > cands[j].mod })
	return cands[0].path, true
}

// MaxFileBytes bounds a tokenizer.json: the largest published ones are
// tens of MB.
const MaxFileBytes = 256 << 20

// readBounded reads the file at path, refusing one over limit bytes
// without reading further (a device such as /dev/zero never ends).
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes, more than a tokenizer.json holds", path, limit)
	}
	return b, nil
}
