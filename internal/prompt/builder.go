package prompt

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"

	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/analyze"
	"github.com/reprise-bench/reprise/trace/media"
)

// MinWords is the fewest single-token words a tokenizer must offer.
const MinWords = 64

// MaxWords caps the vocabulary (the lowest ids, usually the most common
// words, are kept). It exceeds the largest number of distinct blocks that
// follow one parent block in the Mooncake traces (7,373 after id 0 in the
// conversation trace), so sibling blocks can all start differently, and
// it keeps the words within the tokenizer's word cache.
const MaxWords = 16384

// Prompt is one built prompt. A Prompt may be reused across Build calls:
// Build overwrites every field and reuses TokenIDs' backing array.
type Prompt struct {
	// Text is the prompt as UTF-8 text (for synthesized prompts: ASCII
	// words separated by spaces). For a row with its own text_input it is
	// that text; for rows with messages or payload it is "".
	Text string
	// TokenIDs are the ids of Text under the Builder's tokenizer, filled for
	// synthesized prompts when Config.Format is FormatTokenIDs. The
	// Prompt owns the slice.
	TokenIDs []int
	// Tokens is the number of tokens of the prompt: the synthesized length
	// (input length minus ISL correction), or the tokenizer's count of a
	// row's own text (messages: of their text contents, without the chat
	// template); -1 for a payload row.
	Tokens int
	// TraceTokens is the row's input length.
	TraceTokens int
	// Synthesized is false when the row carries its own content
	// (text_input, messages or payload), which is to be sent as it is.
	Synthesized bool
	// Fitted is true when MismatchFit changed how the row's ids were used.
	Fitted bool
	// ExpectedCachedTokens is what an infinite prefix cache with the
	// trace's block size holds of this prompt after every earlier Build:
	// min(m·B, input length) with m the leading run of ids already seen
	// (analyze.PrefixCache semantics). 0 for rows without ids.
	ExpectedCachedTokens int
	// ExpectedCachedTokensLRU is the same for an LRU cache of
	// Config.ExpectedCacheTokens tokens; -1 when that model is off.
	ExpectedCachedTokensLRU int

	// stripped: a leading space was dropped from Text (SentencePiece
	// tokenizers prepend it themselves); a later session turn puts it back.
	stripped bool
}

// Stats reports a Builder's work and memory.
type Stats struct {
	Words       int   // single-token words in the vocabulary
	Prompts     int64 // prompts synthesized
	Tokens      int64 // tokens synthesized
	BlockHits   int64 // blocks served from the cache
	BlockMisses int64 // blocks generated
	Evictions   int64 // blocks evicted from the cache
	Blocks      int   // blocks cached now
	// BlockBytes is the memory held by cached blocks now (text, ids and
	// bookkeeping), at most Config.BlockCacheBytes plus one block.
	BlockBytes int64
	// IDs is the number of distinct hash ids seen; IDBytes estimates the
	// memory of their first-word assignments: about 100 bytes per distinct
	// id until Prepare returns, then about 40 per id whose first word is
	// not its seeded preference (see [Builder.Prepare]).
	IDs     int
	IDBytes int64
	// FirstWordCollisions counts blocks whose first word equals that of
	// an earlier block after the same parent, because the vocabulary had
	// fewer words than the parent had children (or the trace's ids are
	// not chained). Each one lets two prompts share one token more than
	// their ids say.
	FirstWordCollisions int64
	Fitted              int64 // rows changed by MismatchFit
	Clamped             int64 // rows whose corrected length was clamped to 1
}

// Builder builds prompts for one tokenizer. It is safe for concurrent use;
// see the package documentation for what order means.
type Builder struct {
	tok     tokenizer.Tokenizer
	cfg     Config
	words   []string // " word", each exactly one token
	wordIDs []int32
	// seq is Config.Corpus as indices into words (its words that are in
	// the vocabulary, in order); nil without a corpus.
	seq        []uint32
	stripFirst bool
	avgWord    int

	// mu guards everything below. Blocks are immutable once made, so a
	// Build copies them after releasing mu.
	mu       sync.Mutex
	cache    blockCache
	first    map[uint64]uint32
	used     map[sibling]struct{}
	children map[family]uint32 // words taken under each parent
	models   map[int]*cacheModels
	// preparing is set while a Preparer walks the trace.
	// After Prepare: prepared is set, first, used and children are nil,
	// and a block's first word is moved[h] when h is there, else its
	// seeded preference; expected holds every prepared row's expectations.
	prepared  bool
	preparing bool
	moved     map[uint64]uint32
	nIDs      int
	expected  expectations
	fresh     uint64
	stats     Stats
}

// expected holds a prepared row's expected cached tokens; inf < 0 marks a
// row Prepare did not see.
type expected struct{ inf, lru int32 }

// expectations maps trace.Row.Index to the row's expected cached tokens:
// a table by index when the prepared rows' indexes are dense (every row of
// the source, or most: 8 bytes per row), else a map. The table grows in
// chunks of expChunk rows as rows are set, so a walk that does not know
// the number of rows ahead (Preparer) never holds two copies of it.
type expectations struct {
	chunks [][]expected // row i at chunks[i/expChunk][i%expChunk]; inf < 0: not set
	n      int64        // rows set in the table
	sparse map[int64]expected
}

// expChunk is the number of rows per chunk of the dense table (512 KiB).
const expChunk = 1 << 16

// newExpectations returns the table for rows, a map when their indexes are
// not dense.
func newExpectations(rows []trace.Row) expectations {
	hi := int64(-1)
	for i := range rows {
		if rows[i].Index < 0 {
			return expectations{sparse: make(map[int64]expected, len(rows))}
		}
		hi = max(hi, rows[i].Index)
	}
	if hi >= 2*int64(len(rows))+1024 {
		return expectations{sparse: make(map[int64]expected, len(rows))}
	}
	return expectations{}
}

func (e *expectations) set(i int64, x expected) {
	if e.sparse == nil && (i < 0 || i >= 4*(e.n+1)+expChunk) {
		// Not dense (a negative index, or one far beyond the rows set so
		// far): a map from now on.
		e.sparse = make(map[int64]expected, e.n+1)
		for c, ch := range e.chunks {
			for k, v := range ch {
				if v.inf >= 0 {
					e.sparse[int64(c)*expChunk+int64(k)] = v
				}
			}
		}
		e.chunks = nil
	}
	if e.sparse != nil {
		e.sparse[i] = x
		return
	}
	c := int(i / expChunk)
	if c >= len(e.chunks) {
		e.chunks = append(e.chunks, make([][]expected, c+1-len(e.chunks))...)
	}
	ch := e.chunks[c]
	if ch == nil {
		ch = make([]expected, expChunk)
		for k := range ch {
			ch[k].inf = -1
		}
		e.chunks[c] = ch
	}
	if ch[i%expChunk].inf < 0 {
		e.n++
	}
	ch[i%expChunk] = x
}

func (e *expectations) get(i int64) (expected, bool) {
	if e.sparse != nil {
		x, ok := e.sparse[i]
		return x, ok
	}
	if i < 0 || i/expChunk >= int64(len(e.chunks)) {
		return expected{}, false
	}
	ch := e.chunks[i/expChunk]
	if ch == nil || ch[i%expChunk].inf < 0 {
		return expected{}, false
	}
	return ch[i%expChunk], true
}

// sibling marks word as taken by a child of parent (root: first block).
type sibling struct {
	parent uint64
	root   bool
	word   uint32
}

// family is a parent (root: the first blocks), whose children's first
// words should differ.
type family struct {
	parent uint64
	root   bool
}

type cacheModels struct {
	inf, lru *analyze.PrefixCache
}

// New returns a Builder for tok. It picks the tokenizer's single-token words
// and verifies that sequences of them tokenize to one token per word,
// dropping the words that do not (this takes tens of milliseconds for a
// 200k vocabulary). tok must implement [tokenizer.Vocabulary], as every
// tokenizer of package tokenizer does.
func New(tok tokenizer.Tokenizer, cfg Config) (*Builder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Builder{
		tok:      tok,
		cfg:      cfg,
		cache:    newBlockCache(cfg.BlockCacheBytes),
		first:    make(map[uint64]uint32),
		used:     make(map[sibling]struct{}),
		children: make(map[family]uint32),
		models:   make(map[int]*cacheModels),
	}
	if err := s.pickWords(); err != nil {
		return nil, err
	}
	total := 0
	for _, w := range s.words {
		total += len(w)
	}
	s.avgWord = total/len(s.words) + 1
	s.stats.Words = len(s.words)
	return s, nil
}

// Tokenizer returns the tokenizer the Builder builds for.
func (s *Builder) Tokenizer() tokenizer.Tokenizer { return s.tok }

// Stats returns the Builder's counters and memory use.
func (s *Builder) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Blocks = s.cache.len()
	st.BlockBytes = s.cache.bytes
	st.Evictions = s.cache.evictions
	if s.prepared {
		st.IDs = s.nIDs
		st.IDBytes = int64(len(s.moved)) * 40
		return st
	}
	st.IDs = len(s.first)
	st.IDBytes = int64(len(s.first))*40 + int64(len(s.used))*56
	return st
}

// isWordPiece reports whether p is " " followed by 2..15 ASCII letters.
func isWordPiece(p string) bool {
	if len(p) < 3 || len(p) > 16 || p[0] != ' ' {
		return false
	}
	for i := 1; i < len(p); i++ {
		c := p[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// cand is a candidate word. A word qualifies when " word" is one token
// (byte-level tokenizers) or "word" is (SentencePiece tokenizers, which
// turn the text's spaces into "▁" and prepend one, so "a b" reads "▁a▁b").
type cand struct {
	w        string
	id       int32
	stripped bool
}

// pickWords selects the vocabulary: pieces " word" that encode to exactly
// their own single id (and, for tokenizers that prepend a space
// themselves, "word" too), then drops words until a long text mixing all
// of them encodes to exactly one id per word.
func (s *Builder) pickWords() error {
	v, ok := s.tok.(tokenizer.Vocabulary)
	if !ok {
		return fmt.Errorf("tokenizer %s does not list its vocabulary (tokenizer.Vocabulary)", s.tok.Name())
	}
	var cands []cand
	stripOK := 0
	var one []int
	var inCorpus map[string]bool
	if s.cfg.Corpus != nil {
		inCorpus = make(map[string]bool, 4096)
		for _, w := range s.cfg.Corpus {
			inCorpus[w] = true
		}
	}
	// The mode (spaced or stripped) is decided by the first 256
	// qualifying words; then words of that mode are collected up to
	// MaxWords.
	const probe = 256
	for id := range v.VocabSize() {
		if len(s.words) >= MaxWords {
			break
		}
		p, ok := v.Piece(id)
		if !ok || !isWordPiece(p) || inCorpus != nil && !inCorpus[p[1:]] {
			continue
		}
		one = s.tok.AppendEncode(one[:0], p)
		spaced := len(one) == 1 && one[0] == id
		one = s.tok.AppendEncode(one[:0], p[1:])
		stripped := len(one) == 1 && one[0] == id
		if !spaced && !stripped {
			continue
		}
		c := cand{p, int32(id), stripped}
		if len(cands) < probe {
			if stripped {
				stripOK++
			}
			cands = append(cands, c)
			if len(cands) < probe {
				continue
			}
			s.decideMode(cands, stripOK)
			continue
		}
		if c.stripped == s.stripFirst {
			s.words = append(s.words, c.w)
			s.wordIDs = append(s.wordIDs, c.id)
		}
	}
	if len(cands) < probe {
		s.decideMode(cands, stripOK)
	}
	// Verification and repair: encode every word next to pseudo-random
	// neighbours and next to itself; drop the words at a mismatch.
	for round := 0; ; round++ {
		if len(s.words) < MinWords {
			return fmt.Errorf("tokenizer %s: %w (%d found, %d needed)", s.tok.Name(), ErrNoWords, len(s.words), MinWords)
		}
		bad := s.verifyWords()
		if bad < 0 {
			s.corpusSequence()
			return nil
		}
		if round == 100 {
			return fmt.Errorf("tokenizer %s: single-token words do not stay single tokens when concatenated (still failing after %d repairs)", s.tok.Name(), round)
		}
		s.words = append(s.words[:bad], s.words[bad+1:]...)
		s.wordIDs = append(s.wordIDs[:bad], s.wordIDs[bad+1:]...)
	}
}

// corpusSequence maps Config.Corpus onto the vocabulary (s.seq).
func (s *Builder) corpusSequence() {
	if s.cfg.Corpus == nil {
		return
	}
	index := make(map[string]uint32, len(s.words))
	for i, w := range s.words {
		index[w[1:]] = uint32(i)
	}
	s.seq = make([]uint32, 0, len(s.cfg.Corpus))
	for _, w := range s.cfg.Corpus {
		if i, ok := index[w]; ok {
			s.seq = append(s.seq, i)
		}
	}
}

// decideMode sets stripFirst from the probed candidates and keeps those
// of the chosen mode.
func (s *Builder) decideMode(cands []cand, stripOK int) {
	s.stripFirst = len(cands) > 0 && stripOK*2 > len(cands)
	for _, c := range cands {
		if c.stripped == s.stripFirst && len(s.words) < MaxWords {
			s.words = append(s.words, c.w)
			s.wordIDs = append(s.wordIDs, c.id)
		}
	}
}

// verifyWords encodes a text holding every word three times (two shuffled
// passes and once doubled) and returns the index of a word at the first
// token that differs from the expected ids, or -1 when all match.
func (s *Builder) verifyWords() int {
	n := len(s.words)
	order := make([]int, 0, 4*n)
	st := mix(s.cfg.Seed ^ 0x5eed)
	for pass := range 2 {
		perm := make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		for i := n - 1; i > 0; i-- {
			st += golden
			j := int(mulHi(mix(st), uint64(i+1)))
			perm[i], perm[j] = perm[j], perm[i]
		}
		_ = pass
		order = append(order, perm...)
	}
	for i := range n {
		order = append(order, i, i)
	}
	var b strings.Builder
	for _, w := range order {
		b.WriteString(s.words[w])
	}
	text := b.String()
	if s.stripFirst {
		text = text[1:]
	}
	got := s.tok.Encode(text)
	for i, w := range order {
		if i >= len(got) || got[i] != int(s.wordIDs[w]) {
			if i > 0 && i < len(got) {
				// The previous word may be the one that merged.
				return order[i-1]
			}
			return w
		}
	}
	if len(got) != len(order) {
		return order[len(order)-1]
	}
	return -1
}

// maxPrepareErrors bounds the row errors Prepare reports (it still
// counts them all).
const maxPrepareErrors = 20

// ErrPrepared is returned by a second call of [Builder.Prepare] (or
// [Builder.NewPreparer]).
var ErrPrepared = errors.New("prompt: Prepare called twice (give it the whole trace once)")

// Prepare walks the whole trace in arrival order before any Build: it
// checks every row (hash ids that do not fit their length under
// MismatchError, rows without a length), assigns the first word of every
// block in trace order and computes every row's expected cached tokens.
// After Prepare, Build depends only on the row, not on the order or the
// goroutine it is called from, so concurrent builders produce the same
// prompts as one. It returns every row error at once (up to 20, plus a
// count), joined.
//
// Prepare is called once, with every row that will be built, before any
// Build. It then frees what only the order-dependent walk needs (the
// prefix-cache models and the per-id and per-sibling maps): it keeps 8
// bytes per row (expectations) and an entry only for the ids whose first
// word is not their seeded preference (a pure function of the id and the
// seed). A row Prepare did not see is still built, with expectations as
// if the trace began with it and its new blocks' first words not kept
// apart from their siblings'.
//
// Prepare(rows) is the same walk as a [Preparer] given the rows one by one.
func (s *Builder) Prepare(rows []trace.Row) error {
	pr, err := s.newPreparer(newExpectations(rows))
	if err != nil {
		return err
	}
	for i := range rows {
		pr.Add(&rows[i])
	}
	return pr.Done()
}

// Preparer is [Builder.Prepare] one row at a time, for a trace read as a
// stream (a first pass over a file too large to hold): give it every row
// that will be built, in arrival order, with Add, then call Done before
// any Build. It keeps nothing of the rows but their 8-byte expectations
// (see Prepare). A Preparer is not safe for concurrent use, and the Builder
// must not build until Done returned.
type Preparer struct {
	s    *Builder
	errs []error
	bad  int
	done bool
}

// NewPreparer starts the walk of Prepare over rows given one by one. It
// returns ErrPrepared when the Builder was prepared already (or is being).
func (s *Builder) NewPreparer() (*Preparer, error) {
	return s.newPreparer(expectations{})
}

func (s *Builder) newPreparer(e expectations) (*Preparer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prepared || s.preparing {
		return nil, ErrPrepared
	}
	s.preparing = true
	s.expected = e
	return &Preparer{s: s}, nil
}

// Add walks row, the next row in arrival order. A problem with the row is
// kept for Done. Add does not keep row.
func (pr *Preparer) Add(row *trace.Row) {
	if pr.done {
		panic("BUG: prompt: Preparer.Add after Done")
	}
	s := pr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if own, err := hasOwnContent(row); err != nil || own {
		if err != nil {
			pr.fail(err)
		}
		return
	}
	ids, B, _, err := s.plan(row, false)
	if err != nil {
		pr.fail(err)
		return
	}
	e := expected{lru: -1}
	if len(ids) > 0 {
		m := s.model(B)
		e.inf = int32(m.inf.Access(ids, row.InputTokens))
		if m.lru != nil {
			e.lru = int32(m.lru.Access(ids, row.InputTokens))
		}
		for j, h := range ids {
			parent := uint64(0)
			if j > 0 {
				parent = ids[j-1]
			}
			s.firstWord(h, parent, j == 0)
		}
	}
	s.expected.set(row.Index, e)
}

func (pr *Preparer) fail(err error) {
	pr.bad++
	if len(pr.errs) < maxPrepareErrors {
		pr.errs = append(pr.errs, err)
	}
}

// Done ends the walk (the Builder is prepared from now on, even with
// errors) and returns every row error at once (up to 20, plus a count),
// joined, like Prepare.
func (pr *Preparer) Done() error {
	s := pr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !pr.done {
		pr.done = true
		s.freeze()
		if pr.bad > len(pr.errs) {
			pr.errs = append(pr.errs, fmt.Errorf("%d more rows with errors", pr.bad-len(pr.errs)))
		}
	}
	return errors.Join(pr.errs...)
}

// freeze ends Prepare: it keeps the first words that differ from their
// preference and drops the walk's state. s.mu must be held.
func (s *Builder) freeze() {
	s.moved = make(map[uint64]uint32)
	for h, w := range s.first {
		if w != s.preferred(h) {
			s.moved[h] = w
		}
	}
	s.nIDs = len(s.first)
	s.first, s.used, s.children = nil, nil, nil
	s.models = make(map[int]*cacheModels)
	s.prepared, s.preparing = true, false
}

// plan checks row's ids against its length and returns the ids to use
// (cut under MismatchFit), the block size, and whether Fit changed them.
// count says whether to count a fit in the stats. s.mu must be held.
func (s *Builder) plan(row *trace.Row, count bool) (ids []uint64, B int, fitted bool, err error) {
	L := row.InputTokens
	if L <= 0 {
		return nil, 0, false, fmt.Errorf("row %d (line %d): input_length %d: %w", row.Index, row.Line, L, ErrNoLength)
	}
	ids, B = row.HashIDs, row.BlockSize
	if B <= 0 {
		return nil, 0, false, nil
	}
	k := len(ids)
	if k == 0 || ((k-1)*B < L && L <= k*B) {
		return ids, B, false, nil
	}
	if s.cfg.Mismatch != MismatchFit {
		return nil, 0, false, &HashMismatchError{Index: row.Index, Line: row.Line, InputTokens: L, HashIDs: k, BlockSize: B}
	}
	if count {
		s.stats.Fitted++
	}
	if L <= (k-1)*B {
		ids = ids[:(L+B-1)/B]
	}
	return ids, B, true, nil
}

// Build builds the prompt of row into p. It returns a *HashMismatchError
// for a row whose ids do not fit its length under MismatchError, and an
// error wrapping ErrNoLength for a row to synthesize without a positive
// length. It is safe to call from several goroutines (with distinct p);
// without a prior Prepare, rows must be built in arrival order for the
// expected cached tokens and first-word choices to follow the trace.
// Build allocates the prompt's text (one allocation) and, with
// FormatTokenIDs, grows p.TokenIDs when needed.
func (s *Builder) Build(row *trace.Row, p *Prompt) error { return s.build(row, p, 0, false) }

// BuildKeyed builds as [Builder.Build] does, except that the fresh words
// after the row's hash ids (all of a row without ids) come from key
// rather than from the Builder's counter: equal keys (and seeds) give
// equal fresh words whatever was built before, in this process or
// another. A synthetic load keys each request by its index, so a shard of
// a run sends the unsharded run's prompts.
func (s *Builder) BuildKeyed(row *trace.Row, p *Prompt, key uint64) error {
	return s.build(row, p, key, true)
}

func (s *Builder) build(row *trace.Row, p *Prompt, key uint64, keyed bool) error {
	*p = Prompt{TokenIDs: p.TokenIDs[:0], TraceTokens: row.InputTokens, ExpectedCachedTokensLRU: -1}
	if len(row.Raw) > 0 {
		own, err := s.ownContent(row, p)
		if err != nil || own {
			return err
		}
	}
	refs := refPool.Get().(*[]*block)
	defer func() {
		clear(*refs)
		refPool.Put(refs)
	}()
	blocks, fresh, err := s.collect(row, p, (*refs)[:0], key, keyed)
	if err != nil {
		return err
	}
	*refs = blocks
	T := p.Tokens
	textLen := 0
	for _, b := range blocks {
		textLen += len(b.text)
	}
	if fresh != nil {
		textLen += len(fresh.text)
	}
	var sb strings.Builder
	sb.Grow(textLen)
	for _, b := range blocks {
		sb.WriteString(b.text)
	}
	if fresh != nil {
		sb.WriteString(fresh.text)
	}
	p.Text = sb.String()
	if s.stripFirst && p.Text != "" && p.Text[0] == ' ' {
		p.Text = p.Text[1:]
		p.stripped = true
	}
	if s.cfg.Format == FormatTokenIDs {
		ids := p.TokenIDs
		if cap(ids) < T {
			ids = make([]int, 0, T)
		}
		for _, b := range blocks {
			for _, id := range b.ids {
				ids = append(ids, int(id))
			}
		}
		if fresh != nil {
			for _, id := range fresh.ids {
				ids = append(ids, int(id))
			}
		}
		p.TokenIDs = ids
	}
	p.Synthesized = true
	return nil
}

// refPool recycles Build's list of blocks.
var refPool = sync.Pool{New: func() any { b := make([]*block, 0, 256); return &b }}

// collect gathers, under s.mu, the blocks of row's prompt (appended to
// refs) and the fresh block after them, and fills p's lengths and
// expectations.
func (s *Builder) collect(row *trace.Row, p *Prompt, refs []*block, key uint64, keyed bool) ([]*block, *block, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids, B, fitted, err := s.plan(row, true)
	if err != nil {
		return nil, nil, err
	}
	p.Fitted = fitted
	L := row.InputTokens
	if e, ok := s.expected.get(row.Index); ok {
		p.ExpectedCachedTokens, p.ExpectedCachedTokensLRU = int(e.inf), int(e.lru)
	} else if len(ids) > 0 {
		m := s.model(B)
		p.ExpectedCachedTokens = m.inf.Access(ids, L)
		if m.lru != nil {
			p.ExpectedCachedTokensLRU = m.lru.Access(ids, L)
		}
	}
	corr := s.cfg.ISLCorrection
	if row.TemplateTokens > 0 && !s.cfg.FixedISLCorrection {
		corr = row.TemplateTokens // what the recorded server's template added
	}
	T := L - corr
	if T < 1 {
		T = 1
		s.stats.Clamped++
	}
	pos := 0
	for j := 0; j < len(ids) && pos < T; j++ {
		b := s.block(ids, j, min(B, T-pos))
		refs = append(refs, b)
		pos += b.tokens()
	}
	var fresh *block
	if pos < T {
		var x uint64
		if keyed {
			x = mix(s.cfg.Seed^freshDomain) ^ mix(key^keyDomain)
		} else {
			s.fresh++
			x = mix(s.cfg.Seed^freshDomain) ^ s.fresh
		}
		fresh = s.generate(mix(x), s.pickFrom(x), T-pos, s.cfg.Format == FormatTokenIDs)
	}
	p.Tokens = T
	s.stats.Prompts++
	s.stats.Tokens += int64(T)
	return refs, fresh, nil
}

func (s *Builder) model(B int) *cacheModels {
	m := s.models[B]
	if m == nil {
		m = &cacheModels{inf: analyze.NewPrefixCache(B, analyze.InfiniteCapacity)}
		if s.cfg.ExpectedCacheTokens > 0 {
			m.lru = analyze.NewPrefixCache(B, s.cfg.ExpectedCacheTokens)
		}
		s.models[B] = m
	}
	return m
}

// block returns the block of ids[j] with size tokens, from the cache or
// newly generated.
func (s *Builder) block(ids []uint64, j, size int) *block {
	h := ids[j]
	key := blockKey{id: h, size: int32(size)}
	if b := s.cache.get(key); b != nil {
		s.stats.BlockHits++
		return b
	}
	s.stats.BlockMisses++
	parent, root := uint64(0), j == 0
	if !root {
		parent = ids[j-1]
	}
	first := s.firstWord(h, parent, root)
	b := s.generate(mix(mix(s.cfg.Seed)^h), first, size, s.cfg.Format == FormatTokenIDs)
	b.key = key
	s.cache.put(b)
	return b
}

// firstWord returns the first word of id h's block: assigned when h is
// first seen, preferring a seeded pseudo-random word, and probing for one
// no other child of the same parent has. After Prepare it only looks the
// assignment up.
func (s *Builder) firstWord(h, parent uint64, root bool) uint32 {
	if s.prepared {
		if w, ok := s.moved[h]; ok {
			return w
		}
		return s.preferred(h)
	}
	if w, ok := s.first[h]; ok {
		return w
	}
	n := uint32(len(s.words))
	pref := s.preferred(h)
	w := pref
	fam := family{parent, root}
	taken := s.children[fam]
	if taken >= n {
		// Every word is some sibling's already (a million first blocks
		// share the root): probing would scan the whole vocabulary for
		// each new block, quadratic in the trace.
		s.stats.FirstWordCollisions++
		s.first[h] = w
		return w
	}
	for i := uint32(0); ; i++ {
		if i == n {
			w = pref
			s.stats.FirstWordCollisions++
			break
		}
		c := pref + i
		if c >= n {
			c -= n
		}
		if _, taken := s.used[sibling{parent, root, c}]; !taken {
			w = c
			break
		}
	}
	if _, dup := s.used[sibling{parent, root, w}]; !dup {
		s.used[sibling{parent, root, w}] = struct{}{}
		s.children[fam] = taken + 1
	}
	s.first[h] = w
	return w
}

// generate makes a block of size words: first, then words drawn from the
// stream that starts at state. Word j depends only on (state, j), so a
// shorter block is a prefix of a longer one.
func (s *Builder) generate(state uint64, first uint32, size int, withIDs bool) *block {
	b := &block{}
	text := make([]byte, 0, size*s.avgWord)
	if withIDs {
		b.ids = make([]int32, 0, size)
	}
	n := uint64(len(s.words))
	w := first
	var at uint64 // with a corpus: where the block reads it
	if s.seq != nil {
		at = mulHi(mix(state^corpusDomain), uint64(len(s.seq)))
	}
	for j := 0; j < size; j++ {
		switch {
		case j == 0:
		case s.seq != nil:
			w = s.seq[at]
			if at++; at == uint64(len(s.seq)) {
				at = 0
			}
		default:
			state += golden
			w = uint32(mulHi(mix(state), n))
		}
		text = append(text, s.words[w]...)
		if withIDs {
			b.ids = append(b.ids, s.wordIDs[w])
		}
	}
	b.text = string(text)
	b.n = int32(size)
	return b
}

func (s *Builder) pickFrom(x uint64) uint32 { return uint32(mulHi(mix(x), uint64(len(s.words)))) }

// preferred is the first word id h's block gets unless a sibling has it.
func (s *Builder) preferred(h uint64) uint32 { return s.pickFrom(mix(s.cfg.Seed^firstDomain) ^ h) }

// hasOwnContent reports whether row carries its own content.
func hasOwnContent(row *trace.Row) (bool, error) {
	if len(row.Raw) == 0 {
		return false, nil
	}
	raw, err := decodeRaw(row)
	if err != nil {
		return false, err
	}
	return raw.TextInput != nil || len(raw.Messages) > 0 || len(raw.Payload) > 0 || len(raw.Media) > 0, nil
}

// decodeRaw decodes row's Raw; its media member is cut out first, so that
// its base64 is not scanned (design 0022).
func decodeRaw(row *trace.Row) (rawContent, error) {
	var raw rawContent
	src := row.Raw
	rest, m, cut := media.CutMedia(src, nil)
	if cut {
		src = rest
	}
	if err := json.Unmarshal(src, &raw); err != nil {
		return raw, fmt.Errorf("row %d (line %d): row content: %w", row.Index, row.Line, err)
	}
	if cut {
		raw.Media = m
	}
	return raw, nil
}

// rawContent is the part of trace.Row.Raw that replaces synthesis.
type rawContent struct {
	TextInput *string         `json:"text_input"`
	Messages  json.RawMessage `json:"messages"`
	Payload   json.RawMessage `json:"payload"`
	// Media are the row's images, audio and video (design 0022): a row
	// of media alone is sent with no text.
	Media json.RawMessage `json:"media"`
}

// ownContent fills p for a row that carries its own content and reports
// whether it does.
func (s *Builder) ownContent(row *trace.Row, p *Prompt) (bool, error) {
	raw, err := decodeRaw(row)
	if err != nil {
		return false, err
	}
	switch {
	case raw.TextInput != nil:
		p.Text = *raw.TextInput
		p.Tokens = s.tok.Count(p.Text)
	case len(raw.Messages) > 0:
		var msgs []struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw.Messages, &msgs); err != nil {
			return false, fmt.Errorf("row %d (line %d): messages: %w", row.Index, row.Line, err)
		}
		for _, m := range msgs {
			p.Tokens += s.countContent(m.Content)
		}
	case len(raw.Payload) > 0:
		p.Tokens = -1
	case len(raw.Media) > 0:
		p.Text, p.Tokens = "", 0
	default:
		return false, nil
	}
	return true, nil
}

// countContent counts the text of an OpenAI message content: a string or
// an array of parts with "text".
func (s *Builder) countContent(c json.RawMessage) int {
	var str string
	if json.Unmarshal(c, &str) == nil {
		return s.tok.Count(str)
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(c, &parts) != nil {
		return 0
	}
	n := 0
	for _, part := range parts {
		n += s.tok.Count(part.Text)
	}
	return n
}

// Stream constants: splitmix64.
const (
	golden       = 0x9e3779b97f4a7c15
	freshDomain  = 0x66726573682d2d2d // "fresh---"
	keyDomain    = 0x6b65792d2d2d2d2d // "key-----" (BuildKeyed)
	firstDomain  = 0x6669727374776f72 // "firstwor"
	corpusDomain = 0x636f727075732d2d // "corpus--"
)

// mix is splitmix64's finalizer: a bijection of uint64 with good avalanche.
func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// mulHi maps x uniformly onto [0, n) (Lemire's multiply-shift).
func mulHi(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// wordsDomain separates the streams of [Builder.Words] from the others.
const wordsDomain = 0x776f7264732d2d2d // "words---"

// Words returns n tokens of words from a stream keyed by key: equal keys
// (and seeds) give equal text whatever was built before, different keys
// texts that differ from their first word on (but by chance). It makes the
// messages a replay puts before a row's own content (AIPerf's shared
// system prompt, one key for every conversation, and its user context
// prompt, a key per conversation). The text is exactly n tokens when
// tokenized alone (a leading space is dropped for SentencePiece
// tokenizers, which add it themselves); it allocates the text. Safe for
// concurrent use; n < 1 returns "".
func (s *Builder) Words(key uint64, n int) string {
	if n < 1 {
		return ""
	}
	x := mix(s.cfg.Seed^wordsDomain) ^ mix(key^keyDomain)
	t := s.generate(mix(x), s.pickFrom(x), n, false).text // the vocabulary only: no lock
	if s.stripFirst && t != "" && t[0] == ' ' {
		t = t[1:]
	}
	return t
}
