package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// hfFile is the part of a Hugging Face tokenizer.json this package reads.
type hfFile struct {
	AddedTokens  []hfAddedToken `json:"added_tokens"`
	Normalizer   *hfComponent   `json:"normalizer"`
	PreTokenizer *hfComponent   `json:"pre_tokenizer"`
	Model        hfModel        `json:"model"`
}

type hfAddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
}

// hfComponent is a normalizer or pre-tokenizer: a "type" plus the fields
// of the types we implement.
type hfComponent struct {
	Type          string         `json:"type"`
	Normalizers   []*hfComponent `json:"normalizers"`
	Pretokenizers []*hfComponent `json:"pretokenizers"`
	// Prepend
	Prepend string `json:"prepend"`
	// Replace and Split
	Pattern  hfPattern `json:"pattern"`
	Content  string    `json:"content"`
	Behavior string    `json:"behavior"`
	Invert   bool      `json:"invert"`
	// ByteLevel
	AddPrefixSpace *bool `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`
	// Metaspace
	Replacement   string `json:"replacement"`
	PrependScheme string `json:"prepend_scheme"`
	Split         *bool  `json:"split"`
}

type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

type hfModel struct {
	Type                    string           `json:"type"`
	Dropout                 *float64         `json:"dropout"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
	FuseUnk                 bool             `json:"fuse_unk"`
	ByteFallback            bool             `json:"byte_fallback"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	VocabRaw                json.RawMessage  `json:"vocab"`
	Vocab                   map[string]int32 `json:"-"`
	Merges                  json.RawMessage  `json:"merges"`
}

// maxVocab bounds token ids, so a corrupt file cannot make Load allocate
// without limit.
const maxVocab = 1 << 24

// parseHF builds a tokenizer from the bytes of a tokenizer.json; name is
// used in messages and as the tokenizer's Name.
func parseHF(name string, data []byte) (*bpe, error) {
	f, merges, err := readHF(name, data)
	if err != nil {
		return nil, err
	}
	p := &pipeline{}
	if err := p.addNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("tokenizer %s: normalizer: %w", name, err)
	}
	if err := p.addPreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("tokenizer %s: pre_tokenizer: %w", name, err)
	}
	t, err := newBPE(name, f, p, len(merges))
	if err != nil {
		return nil, err
	}
	if err := t.addVocab(f, p); err != nil {
		return nil, err
	}
	if err := t.addMerges(f.Model.Vocab, merges); err != nil {
		return nil, err
	}
	if p.byteLevel {
		t.initBytePairs()
	}
	t.norm = p.normalize
	t.decodeStrip = p.prepends
	t.setSplitters(p, &f.Model)
	return t, nil
}

// readHF decodes a tokenizer.json, refuses the model options this
// package does not implement, and returns the file with its vocabulary
// decoded, and its merges.
func readHF(name string, data []byte) (*hfFile, [][2]string, error) {
	f := &hfFile{}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	m := &f.Model
	switch {
	case m.Type != "" && m.Type != "BPE":
		return nil, nil, fmt.Errorf("tokenizer %s: %w: model type %q (only BPE is implemented)", name, ErrUnsupported, m.Type)
	case len(m.VocabRaw) == 0:
		return nil, nil, fmt.Errorf("tokenizer %s: model.vocab is missing", name)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "",
		m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, nil, fmt.Errorf("tokenizer %s: %w: BPE continuing_subword_prefix/end_of_word_suffix", name, ErrUnsupported)
	case m.Dropout != nil && *m.Dropout > 0:
		return nil, nil, fmt.Errorf("tokenizer %s: %w: BPE dropout %g (prompt lengths would be random)", name, ErrUnsupported, *m.Dropout)
	}
	if err := json.Unmarshal(m.VocabRaw, &m.Vocab); err != nil {
		return nil, nil, fmt.Errorf("tokenizer %s: model.vocab: want an object of token → id: %w", name, err)
	}
	if len(m.Vocab) == 0 {
		return nil, nil, fmt.Errorf("tokenizer %s: model.vocab is empty", name)
	}
	merges, err := parseMerges(m.Merges)
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer %s: model.merges: %w", name, err)
	}
	return f, merges, nil
}

// newBPE returns an empty tokenizer for f's model and pipeline p, sized
// for its vocabulary, nMerges merges and its largest token id (which
// must be below maxVocab).
func newBPE(name string, f *hfFile, p *pipeline, nMerges int) (*bpe, error) {
	m := &f.Model
	t := &bpe{
		name:         name,
		vocab:        make(map[string]int32, len(m.Vocab)),
		pairs:        make(map[uint64]merge, nMerges),
		ignoreMerges: m.IgnoreMerges,
		byteLevel:    p.byteLevel,
		unk:          -1,
		fuseUnk:      m.FuseUnk,
		cache:        newWordCache(),
	}
	for i := range t.fallback {
		t.fallback[i] = -1
	}
	maxID := int32(-1)
	for _, id := range m.Vocab {
		maxID = max(maxID, id)
	}
	for _, a := range f.AddedTokens {
		maxID = max(maxID, int32(a.ID))
	}
	if maxID >= maxVocab {
		return nil, fmt.Errorf("tokenizer %s: token id %d out of range (ids must be below %d)", name, maxID, maxVocab)
	}
	t.pieces = make([]string, maxID+1)
	return t, nil
}

// addVocab fills the merger's vocabulary, the decoded piece of every id
// (added tokens where the vocabulary has none), the byte fallbacks, the
// unknown token and, for byte-level models, the id of every byte.
func (t *bpe) addVocab(f *hfFile, p *pipeline) error {
	m := &f.Model
	// key converts a vocabulary string to the form words have when they
	// reach the merger: raw bytes for byte-level, unchanged otherwise.
	key := func(s string) (string, bool) { return s, true }
	if p.byteLevel {
		key = byteLevelDecode
	}
	for tok, id := range m.Vocab {
		if id < 0 {
			return fmt.Errorf("tokenizer %s: model.vocab[%q] = %d is negative", t.name, tok, id)
		}
		k, ok := key(tok)
		if !ok {
			t.pieces[id] = tok // not reachable by merging; decodes as written
			continue
		}
		t.vocab[k] = id
		switch {
		case p.byteLevel:
			t.pieces[id] = k
		case m.ByteFallback && isByteToken(tok):
			b, _ := strconv.ParseUint(tok[3:5], 16, 8)
			t.fallback[b] = id
			t.pieces[id] = string([]byte{byte(b)})
		case p.mark != "":
			t.pieces[id] = strings.ReplaceAll(tok, p.mark, " ")
		default:
			t.pieces[id] = tok
		}
	}
	for _, a := range f.AddedTokens {
		if a.ID >= 0 && t.pieces[a.ID] == "" {
			t.pieces[a.ID] = a.Content
		}
	}
	if m.UnkToken != nil {
		if id, ok := m.Vocab[*m.UnkToken]; ok {
			t.unk = id
		}
	}
	if p.byteLevel {
		for b := range 256 {
			id, ok := t.vocab[string([]byte{byte(b)})]
			if !ok {
				return fmt.Errorf("tokenizer %s: %w: byte-level vocabulary lacks byte 0x%02x", t.name, ErrUnsupported, b)
			}
			t.byteIDs[b] = id
		}
	}
	return nil
}

// addMerges ranks the merges by their order in the file; the first of
// two merges of the same pair wins. Every token of a merge must be in
// vocab.
func (t *bpe) addMerges(vocab map[string]int32, merges [][2]string) error {
	for rank, mg := range merges {
		a, aok := vocab[mg[0]]
		b, bok := vocab[mg[1]]
		c, cok := vocab[mg[0]+mg[1]]
		if !aok || !bok || !cok {
			return fmt.Errorf("tokenizer %s: model.merges[%d] %q: token not in vocab", t.name, rank, mg[0]+" "+mg[1])
		}
		k := pairKey(a, b)
		if _, dup := t.pairs[k]; !dup {
			t.pairs[k] = merge{rank: uint32(rank), id: c}
		}
	}
	return nil
}

// setSplitters picks the word splitters for pipeline p: a fast one where
// the pre-tokenizer (or its absence) allows, and the general one.
func (t *bpe) setSplitters(p *pipeline, m *hfModel) {
	switch {
	case len(p.splits) == 0 && p.metaSplit:
		t.fast, t.fastAll = metaspaceSplitter{mark: p.mark, strict: true}, true
	case len(p.splits) == 0 && p.mark != "" && !m.IgnoreMerges && markLeadsTokens(m.Vocab, p.mark):
		// No pre-tokenizer: the whole text is one word. When no token
		// has the mark after another character, no merge can cross the
		// start of a run of marks, so splitting there is exact and lets
		// the word cache work.
		t.fast, t.fastAll = metaspaceSplitter{mark: p.mark}, true
	case len(p.splits) == 0:
		t.fast, t.fastAll = wholeSplitter{}, true
	case len(p.splits) == 1:
		t.fast = fastSplitter(p.patterns[0])
		t.slow = p.splits[0]
	default:
		t.slow = seqSplitter(p.splits)
	}
	if t.slow == nil {
		t.slow = nextSplitter{t.fast}
	}
}

// parseMerges reads both merge encodings: ["a b", …] and [["a","b"], …].
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		out := make([][2]string, len(strs))
		for i, s := range strs {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("entry %d %q: want \"left right\"", i, s)
			}
			out[i] = [2]string{a, b}
		}
		return out, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("want a list of \"a b\" strings or [a, b] pairs: %w", err)
	}
	return pairs, nil
}

// pipeline collects what the normalizer and pre-tokenizer do.
type pipeline struct {
	norms     []func(string) string
	splits    []wordSplitter
	patterns  []string // the patterns of splits, for fast matchers
	byteLevel bool
	mark      string // SentencePiece space mark, "" if none
	prepends  bool   // a mark or space is prepended to the text
	metaSplit bool   // Metaspace split: true
}

func (p *pipeline) normalize(s string) string {
	for _, f := range p.norms {
		s = f(s)
	}
	return s
}

func (p *pipeline) addNormalizer(c *hfComponent) error {
	if c == nil {
		return nil
	}
	switch c.Type {
	case "Sequence":
		for _, n := range c.Normalizers {
			if err := p.addNormalizer(n); err != nil {
				return err
			}
		}
	case "NFC", "NFKC", "NFD", "NFKD":
		form := map[string]norm.Form{"NFC": norm.NFC, "NFKC": norm.NFKC, "NFD": norm.NFD, "NFKD": norm.NFKD}[c.Type]
		p.norms = append(p.norms, func(s string) string {
			if isASCII(s) {
				return s
			}
			return form.String(s)
		})
	case "Prepend":
		pre := c.Prepend
		p.prepends = true
		if pre == spaceMark {
			p.mark = spaceMark
		}
		p.norms = append(p.norms, func(s string) string {
			if s == "" {
				return s
			}
			return pre + s
		})
	case "Replace":
		from, to := c.Pattern.String, c.Content
		switch {
		case from != nil:
			if *from == " " && to == spaceMark {
				p.mark = spaceMark
			}
			f := *from
			p.norms = append(p.norms, func(s string) string { return strings.ReplaceAll(s, f, to) })
		case c.Pattern.Regex != nil:
			re, err := regexp.Compile(translateClasses(*c.Pattern.Regex))
			if err != nil {
				return fmt.Errorf("%w: Replace pattern %q: %w", ErrUnsupported, *c.Pattern.Regex, err)
			}
			p.norms = append(p.norms, func(s string) string { return re.ReplaceAllLiteralString(s, to) })
		default:
			return errors.New("normalizer Replace: no String or Regex pattern")
		}
	default:
		return fmt.Errorf("%w: normalizer type %q", ErrUnsupported, c.Type)
	}
	return nil
}

func (p *pipeline) addPreTokenizer(c *hfComponent) error {
	if c == nil {
		return nil
	}
	switch c.Type {
	case "Sequence":
		for _, s := range c.Pretokenizers {
			if err := p.addPreTokenizer(s); err != nil {
				return err
			}
		}
	case "ByteLevel":
		p.byteLevel = true
		if c.AddPrefixSpace != nil && *c.AddPrefixSpace {
			p.prepends = true
			p.norms = append(p.norms, func(s string) string {
				if s == "" || s[0] == ' ' {
					return s
				}
				return " " + s
			})
		}
		if c.UseRegex == nil || *c.UseRegex {
			return p.addSplit(patGPT2)
		}
	case "Split":
		if c.Pattern.Regex == nil && c.Pattern.String == nil {
			return errors.New("pre-tokenizer Split: no pattern")
		}
		if c.Behavior != "Isolated" || c.Invert {
			return fmt.Errorf("%w: Split behavior %q invert %v (only Isolated, not inverted)", ErrUnsupported, c.Behavior, c.Invert)
		}
		pat := ""
		if c.Pattern.Regex != nil {
			pat = *c.Pattern.Regex
		} else {
			pat = regexp.QuoteMeta(*c.Pattern.String)
		}
		return p.addSplit(pat)
	case "Metaspace":
		mark := c.Replacement
		if mark == "" {
			mark = spaceMark
		}
		p.mark = mark
		scheme := c.PrependScheme
		if scheme == "" {
			scheme = "always"
			if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
				scheme = "never"
			}
		}
		// "first" differs from "always" only after added tokens were
		// split out of the text, which Encode does not do.
		prepend := scheme != "never"
		p.prepends = prepend
		p.norms = append(p.norms, func(s string) string {
			s = strings.ReplaceAll(s, " ", mark)
			if prepend && s != "" && !strings.HasPrefix(s, mark) {
				s = mark + s
			}
			return s
		})
		p.metaSplit = c.Split == nil || *c.Split
	default:
		return fmt.Errorf("%w: pre-tokenizer type %q", ErrUnsupported, c.Type)
	}
	return nil
}

func (p *pipeline) addSplit(pattern string) error {
	re, err := newRegexSplitter(pattern)
	if err != nil {
		return err
	}
	p.splits = append(p.splits, re)
	p.patterns = append(p.patterns, pattern)
	return nil
}

// markLeadsTokens reports whether every token has the mark only in a
// leading run (matches ^mark*[^mark]*$).
func markLeadsTokens(vocab map[string]int32, mark string) bool {
	for tok := range vocab {
		rest := tok
		for strings.HasPrefix(rest, mark) {
			rest = rest[len(mark):]
		}
		if strings.Contains(rest, mark) {
			return false
		}
	}
	return true
}

// metaspaceSplitter splits SentencePiece-normalized text into words that
// start at a mark. strict (Metaspace split: true, MergedWithNext) starts a
// word at every mark; otherwise a run of marks stays with the word it
// precedes.
type metaspaceSplitter struct {
	mark   string
	strict bool
}

func (m metaspaceSplitter) next(s string, i int) int {
	j := i
	if m.strict {
		if strings.HasPrefix(s[j:], m.mark) {
			j += len(m.mark)
		}
	} else {
		for strings.HasPrefix(s[j:], m.mark) {
			j += len(m.mark)
		}
	}
	if k := strings.Index(s[j:], m.mark); k >= 0 {
		return j + k
	}
	return len(s)
}

func isByteToken(s string) bool {
	return len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>' && isHex(s[3]) && isHex(s[4])
}

func isHex(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') }

// byteLevelRunes maps each byte to the printable rune GPT-2's
// bytes_to_unicode gives it; byteLevelBytes is the inverse.
var byteLevelRunes, byteLevelBytes = func() ([256]rune, map[rune]byte) {
	var fwd [256]rune
	inv := make(map[rune]byte, 256)
	n := 0
	for b := range 256 {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			fwd[b] = rune(b)
		} else {
			fwd[b] = rune(256 + n)
			n++
		}
		inv[fwd[b]] = byte(b)
	}
	return fwd, inv
}()

// byteLevelDecode turns a byte-level token ("Ġhello") into its bytes
// (" hello"); ok is false when a rune is outside the byte alphabet.
func byteLevelDecode(tok string) (string, bool) {
	buf := make([]byte, 0, len(tok))
	for _, r := range tok {
		b, ok := byteLevelBytes[r]
		if !ok {
			return "", false
		}
		buf = append(buf, b)
	}
	return string(buf), true
}

// byteLevelEncode is byteLevelDecode's inverse (for tests and tools).
func byteLevelEncode(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		b.WriteRune(byteLevelRunes[raw[i]])
	}
	return b.String()
}
