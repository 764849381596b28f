package tokenizer

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// GGUF (llama.cpp's model file) carries the model's tokenizer in its
// metadata: tokenizer.ggml.model names the kind ("gpt2" is byte-level BPE,
// the kind of Llama 3, Qwen 2/3, DeepSeek, GPT-OSS), tokenizer.ggml.tokens
// the vocabulary in id order, tokenizer.ggml.merges the BPE merges in rank
// order ("a b"), and tokenizer.ggml.pre the pre-tokenizer by name. The
// metadata sits at the head of the file, before the tensors: loadGGUF
// reads only that, whatever the file's size.
//
// Format (little-endian): "GGUF", version u32 (2 or 3), tensor count u64,
// metadata count u64, then per entry a key (string), a value type u32 and
// the value. A string is a u64 length and its bytes; an array is an
// element type u32, a u64 count and the elements.

// ggufPreSplits maps llama.cpp's pre-tokenizer names to the split pattern
// the model's Hugging Face tokenizer.json uses before its ByteLevel step.
var ggufPreSplits = map[string]string{
	"llama3":    patCL100k,
	"llama-v3":  patCL100k,
	"llama-bpe": patCL100k,
	"qwen2":     patQwen2,
	"gpt-2":     patGPT2,
	"gpt2":      patGPT2,
	"default":   patGPT2,
}

// ggufIgnoreMerges are the pre-tokenizers whose models ignore merges for
// a pre-token that is in the vocabulary.
var ggufIgnoreMerges = map[string]bool{"llama3": true, "llama-v3": true, "llama-bpe": true}

// GGUF value types.
const (
	ggufU8 = iota
	ggufI8
	ggufU16
	ggufI16
	ggufU32
	ggufI32
	ggufF32
	ggufBool
	ggufString
	ggufArray
	ggufU64
	ggufI64
	ggufF64
)

// ggufFixedSize is the size of the fixed-width types; 0 for string/array.
var ggufFixedSize = [...]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// Limits that keep a corrupt file from making the reader allocate without
// bound.
const (
	ggufMaxKey     = 1 << 16
	ggufMaxString  = 1 << 20
	ggufMaxEntries = 1 << 20
)

// ggufMeta is the tokenizer part of a GGUF file's metadata.
type ggufMeta struct {
	model, pre     string
	tokens, merges []string
	addSpacePrefix bool
	// chatTemplate is tokenizer.chat_template ("" when absent); bos and
	// eos are tokenizer.ggml.bos_token_id and eos_token_id (-1 when
	// absent); types is tokenizer.ggml.token_type (nil when absent).
	chatTemplate string
	bos, eos     int64
	types        []int32
}

// ggufReader reads GGUF metadata, tracking the offset for messages.
type ggufReader struct {
	r    *bufio.Reader
	off  int64
	name string
	key  string // the entry being read
}

func (g *ggufReader) fail(format string, args ...any) error {
	where := ""
	if g.key != "" {
		where = fmt.Sprintf(" (metadata %q)", g.key)
	}
	return fmt.Errorf("tokenizer %s: GGUF at byte %d%s: %s", g.name, g.off, where, fmt.Sprintf(format, args...))
}

func (g *ggufReader) read(p []byte) error {
	n, err := io.ReadFull(g.r, p)
	g.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return g.fail("file ends inside the metadata (truncated or not a GGUF file)")
		}
		return g.fail("%v", err)
	}
	return nil
}

func (g *ggufReader) u32() (uint32, error) {
	var b [4]byte
	if err := g.read(b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func (g *ggufReader) u64() (uint64, error) {
	var b [8]byte
	if err := g.read(b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func (g *ggufReader) str(limit uint64) (string, error) {
	n, err := g.u64()
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", g.fail("string of %d bytes (at most %d expected; corrupt file?)", n, limit)
	}
	// Read in bounded steps: a corrupt length must not allocate more
	// than the file holds.
	var b strings.Builder
	var chunk [4096]byte
	for n > 0 {
		k := min(n, uint64(len(chunk)))
		if err := g.read(chunk[:k]); err != nil {
			return "", err
		}
		b.Write(chunk[:k])
		n -= k
	}
	return b.String(), nil
}

func (g *ggufReader) skip(n int64) error {
	d, err := g.r.Discard(int(n))
	g.off += int64(d)
	if err != nil {
		return g.fail("file ends inside the metadata (truncated or not a GGUF file)")
	}
	return nil
}

// value reads one value of type t; it keeps strings (and string arrays)
// when keep is set and skips everything else.
func (g *ggufReader) value(t uint32, keep bool) (s string, arr []string, b bool, err error) {
	switch {
	case t == ggufString:
		if !keep {
			n, err := g.u64()
			if err != nil {
				return "", nil, false, err
			}
			if n > ggufMaxString {
				return "", nil, false, g.fail("string of %d bytes (at most %d expected; corrupt file?)", n, ggufMaxString)
			}
			return "", nil, false, g.skip(int64(n))
		}
		s, err = g.str(ggufMaxString)
		return s, nil, false, err
	case t == ggufBool:
		var v [1]byte
		err = g.read(v[:])
		return "", nil, v[0] != 0, err
	case t == ggufArray:
		et, err := g.u32()
		if err != nil {
			return "", nil, false, err
		}
		n, err := g.u64()
		if err != nil {
			return "", nil, false, err
		}
		if n > maxVocab {
			return "", nil, false, g.fail("array of %d elements (at most %d expected; corrupt file?)", n, maxVocab)
		}
		switch {
		case et == ggufArray:
			return "", nil, false, g.fail("nested arrays are not expected in tokenizer metadata")
		case et == ggufString:
			if keep {
				arr = make([]string, 0, min(n, 1<<12)) // n is untrusted
			}
			for range n {
				v, _, _, err := g.value(ggufString, keep)
				if err != nil {
					return "", nil, false, err
				}
				if keep {
					arr = append(arr, v)
				}
			}
			return "", arr, false, nil
		case int(et) < len(ggufFixedSize):
			return "", nil, false, g.skip(int64(n) * int64(ggufFixedSize[et]))
		default:
			return "", nil, false, g.fail("array element type %d is not a GGUF type", et)
		}
	case int(t) < len(ggufFixedSize):
		return "", nil, false, g.skip(int64(ggufFixedSize[t]))
	}
	return "", nil, false, g.fail("value type %d is not a GGUF type", t)
}

// readGGUFMeta reads the tokenizer metadata of a GGUF stream.
func readGGUFMeta(name string, r io.Reader) (*ggufMeta, error) {
	g := &ggufReader{r: bufio.NewReaderSize(r, 1<<16), name: name}
	var magic [4]byte
	if err := g.read(magic[:]); err != nil {
		return nil, err
	}
	if string(magic[:]) != "GGUF" {
		return nil, g.fail("starts with %q, not \"GGUF\": not a GGUF model file", magic[:])
	}
	ver, err := g.u32()
	if err != nil {
		return nil, err
	}
	if ver < 2 || ver > 3 {
		return nil, g.fail("version %d (versions 2 and 3 are read; convert the model with a current llama.cpp)", ver)
	}
	if _, err := g.u64(); err != nil { // tensor count
		return nil, err
	}
	n, err := g.u64()
	if err != nil {
		return nil, err
	}
	if n > ggufMaxEntries {
		return nil, g.fail("%d metadata entries (at most %d expected; corrupt file?)", n, ggufMaxEntries)
	}
	m := &ggufMeta{bos: -1, eos: -1}
	for range n {
		g.key = ""
		key, err := g.str(ggufMaxKey)
		if err != nil {
			return nil, err
		}
		g.key = key
		t, err := g.u32()
		if err != nil {
			return nil, err
		}
		if done, err := g.chatValue(m, key, t); done || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		keep := strings.HasPrefix(key, "tokenizer.ggml.") || key == "tokenizer.chat_template"
		s, arr, b, err := g.value(t, keep)
		if err != nil {
			return nil, err
		}
		switch key {
		case "tokenizer.ggml.model":
			m.model = s
		case "tokenizer.ggml.pre":
			m.pre = s
		case "tokenizer.ggml.tokens":
			m.tokens = arr
		case "tokenizer.ggml.merges":
			m.merges = arr
		case "tokenizer.ggml.add_space_prefix":
			m.addSpacePrefix = b
		case "tokenizer.chat_template":
			m.chatTemplate = s
		}
	}
	return m, nil
}

// chatValue reads the entries a chat template needs that value skips:
// the bos and eos ids (u32) and the token types (an i32 array). done is
// false for any other entry, which is left unread.
func (g *ggufReader) chatValue(m *ggufMeta, key string, t uint32) (done bool, err error) {
	switch {
	case (key == "tokenizer.ggml.bos_token_id" || key == "tokenizer.ggml.eos_token_id") && t == ggufU32:
		v, err := g.u32()
		if key == "tokenizer.ggml.bos_token_id" {
			m.bos = int64(v)
		} else {
			m.eos = int64(v)
		}
		return true, err
	case key == "tokenizer.ggml.token_type" && t == ggufArray:
		et, err := g.u32()
		if err != nil {
			return true, err
		}
		n, err := g.u64()
		if err != nil {
			return true, err
		}
		if n > maxVocab {
			return true, g.fail("array of %d elements (at most %d expected; corrupt file?)", n, maxVocab)
		}
		if et != ggufI32 {
			if int(et) >= len(ggufFixedSize) || ggufFixedSize[et] == 0 {
				return true, g.fail("token types of element type %d (i32 expected)", et)
			}
			return true, g.skip(int64(n) * int64(ggufFixedSize[et]))
		}
		m.types = make([]int32, 0, min(n, 1<<12)) // n is untrusted
		for range n {
			v, err := g.u32()
			if err != nil {
				return true, err
			}
			m.types = append(m.types, int32(v))
		}
		return true, nil
	}
	return false, nil
}

// loadGGUF builds the tokenizer of a GGUF model file from its metadata.
func loadGGUF(name, path string) (*bpe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	defer f.Close()
	m, err := readGGUFMeta(name, f)
	if err != nil {
		return nil, err
	}
	return ggufTokenizer(name, m)
}

// ggufTokenizer turns GGUF tokenizer metadata into the tokenizer.json the
// same model ships on Hugging Face, and parses that.
func ggufTokenizer(name string, m *ggufMeta) (*bpe, error) {
	fix := "use the model's tokenizer.json (--tokenizer FILE or model directory) or ask the server (--tokenizer server)"
	switch {
	case m.model == "":
		return nil, fmt.Errorf("tokenizer %s: GGUF metadata has no tokenizer.ggml.model: the file carries no tokenizer; %s", name, fix)
	case m.model != "gpt2":
		return nil, fmt.Errorf("tokenizer %s: %w: GGUF tokenizer.ggml.model %q (byte-level BPE, \"gpt2\", is read); %s", name, ErrUnsupported, m.model, fix)
	case len(m.tokens) == 0:
		return nil, fmt.Errorf("tokenizer %s: GGUF metadata has no tokenizer.ggml.tokens; %s", name, fix)
	case len(m.tokens) > math.MaxInt32:
		return nil, fmt.Errorf("tokenizer %s: GGUF vocabulary of %d tokens is too large", name, len(m.tokens))
	}
	pre := m.pre
	if pre == "" {
		pre = "default"
	}
	split, ok := ggufPreSplits[pre]
	if !ok {
		return nil, fmt.Errorf("tokenizer %s: %w: GGUF pre-tokenizer %q (read: llama3/llama-bpe, qwen2, gpt-2); %s", name, ErrUnsupported, pre, fix)
	}
	vocab := make(map[string]int32, len(m.tokens))
	var added []hfAddedToken
	for id, t := range m.tokens {
		if _, dup := vocab[t]; dup {
			// A repeated piece (llama.cpp pads vocabularies with
			// "[PAD…]" or repeats control tokens): the first id wins for
			// encoding, the others still decode.
			added = append(added, hfAddedToken{ID: id, Content: t})
			continue
		}
		vocab[t] = int32(id)
	}
	vocabJSON, err := json.Marshal(vocab)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	mergesJSON, err := json.Marshal(m.merges)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	f := hfFile{
		AddedTokens: added,
		PreTokenizer: &hfComponent{Type: "Sequence", Pretokenizers: []*hfComponent{
			{Type: "Split", Pattern: hfPattern{Regex: &split}, Behavior: "Isolated"},
			{Type: "ByteLevel", AddPrefixSpace: &m.addSpacePrefix, UseRegex: new(bool)},
		}},
		// llama.cpp skips the merges for a word that is itself a token
		// with Llama 3's pre-tokenizer, as its tokenizer.json says
		// ("ignore_merges": true).
		Model: hfModel{Type: "BPE", VocabRaw: vocabJSON, Merges: mergesJSON, IgnoreMerges: ggufIgnoreMerges[pre]},
	}
	data, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	return parseHF(name, data)
}
