package tokenizer

import (
	"context"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// bpe is the one BPE engine behind every tokenizer of this package: a
// tiktoken encoding, a byte-level tokenizer.json or a SentencePiece-style
// tokenizer.json. Its fields are read-only after construction, except the
// word cache, which is lock-free; a *bpe is therefore safe for concurrent use.
type bpe struct {
	name string
	// path is the absolute path of the file the tokenizer was loaded
	// from ("" for the embedded vocabularies).
	path string
	// pieces holds the raw bytes of each id (for Decode); "" for ids
	// absent from the vocabulary.
	pieces []string
	// vocab maps a token, in the form words are given to the merger (raw
	// bytes for byte-level, "▁"-normalized text for SentencePiece), to its id.
	vocab map[string]int32
	// concatRank selects tiktoken semantics: two adjacent parts merge with
	// rank vocab[concatenation]. Otherwise pairs holds the merge list.
	concatRank bool
	pairs      map[uint64]merge
	// ignoreMerges emits a word that is itself a token without merging
	// (tiktoken always; Llama 3's "ignore_merges": true).
	ignoreMerges bool
	// byteLevel: the initial symbols of a word are its bytes (byteIDs);
	// otherwise they are its runes, with byte fallback (SentencePiece).
	byteLevel bool
	byteIDs   [256]int32
	// bytePairs[a<<8|b] is the merge of the single-byte parts a and b
	// (rank noRank when none): the first round of merges, which is most
	// of the lookups, without hashing. Built by initBytePairs.
	bytePairs []merge
	fallback  [256]int32 // <0xXX> ids, -1 when absent
	unk       int32      // -1 when absent
	fuseUnk   bool

	// norm rewrites the text before splitting (SentencePiece "▁"); nil = none.
	norm func(string) string
	// fast splits all-ASCII text, or any text when fastAll; nil = always
	// use slow.
	fast    splitter
	fastAll bool
	// slow splits any text.
	slow wordSplitter
	// decodeStrip drops one leading space from Decode's result (the
	// space SentencePiece normalization prepended).
	decodeStrip bool

	cache wordCache
}

// merge is one entry of a tokenizer.json merge list: the pair merges with
// rank and becomes id.
type merge struct {
	rank uint32
	id   int32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// Name implements [Tokenizer].
func (t *bpe) Name() string { return t.name }

// Encode implements [Tokenizer].
func (t *bpe) Encode(text string) []int {
	return t.AppendEncode(make([]int, 0, len(text)/3+1), text)
}

// AppendEncode implements [Tokenizer].
func (t *bpe) AppendEncode(dst []int, text string) []int {
	if t.norm != nil {
		text = t.norm(text)
	}
	if t.fast != nil && (t.fastAll || isASCII(text)) {
		var sc *mergeScratch
		for i := 0; i < len(text); {
			win := text // nextPretoken, inlined (ASCII text: no rune to cut)
			if len(text)-i > maxPretokenBytes {
				win = text[:i+maxPretokenBytes]
				if t.fastAll {
					win = text[:pretokenWindow(text, i)]
				}
			}
			e := t.fast.next(win, i)
			if w := text[i:e]; len(w) <= maxCachedWord {
				for _, id := range t.word(w) {
					dst = append(dst, int(id))
				}
			} else {
				dst = t.appendLong(dst, w, &sc)
			}
			i = e
		}
		putScratch(sc)
		return dst
	}
	return t.appendSlow(dst, text)
}

// appendSlow is AppendEncode through the general splitter. It is a
// separate function so that its closure does not move AppendEncode's dst
// to the heap.
func (t *bpe) appendSlow(dst []int, text string) []int {
	var sc *mergeScratch
	t.slow.splitAll(text, func(w string) bool {
		if len(w) <= maxCachedWord {
			for _, id := range t.word(w) {
				dst = append(dst, int(id))
			}
		} else {
			dst = t.appendLong(dst, w, &sc)
		}
		return true
	})
	putScratch(sc)
	return dst
}

// Count implements [Tokenizer].
func (t *bpe) Count(text string) int {
	n, _ := t.CountContext(context.Background(), text)
	return n
}

// countCheckBytes is how much text CountContext counts between two looks
// at its context: about 0.1–5 ms of work (ASCII words from the cache at
// the fast end, never-seen pieces of a long word at the slow end).
const countCheckBytes = 64 << 10

// CountContext implements [Tokenizer]. It looks at ctx every
// countCheckBytes of text and between the pieces of a long word; finding
// a pre-token takes at most maxPretokenBytes of scanning, so the work
// between two looks is bounded whatever the text. Normalization (NFC,
// SentencePiece's space mark: linear, at hundreds of MB/s) runs before
// the first look.
func (t *bpe) CountContext(ctx context.Context, text string) (int, error) {
	if t.norm != nil {
		text = t.norm(text)
	}
	if t.fast == nil || !(t.fastAll || isASCII(text)) {
		return t.countSlow(ctx, text)
	}
	var sc *mergeScratch
	n := 0
	check := countCheckBytes
	var err error
	for i := 0; i < len(text); {
		win := text // nextPretoken, inlined (ASCII text: no rune to cut)
		if len(text)-i > maxPretokenBytes {
			win = text[:i+maxPretokenBytes]
			if t.fastAll {
				win = text[:pretokenWindow(text, i)]
			}
		}
		e := t.fast.next(win, i)
		if w := text[i:e]; len(w) <= maxCachedWord {
			n += len(t.word(w))
		} else {
			var k int
			k, err = t.countLong(ctx, w, &sc)
			n += k
			if err != nil {
				break
			}
		}
		i = e
		if i >= check {
			if err = ctx.Err(); err != nil {
				break
			}
			check = i + countCheckBytes
		}
	}
	putScratch(sc)
	return n, err
}

func (t *bpe) countSlow(ctx context.Context, text string) (int, error) {
	var sc *mergeScratch
	n, done, check := 0, 0, countCheckBytes
	var err error
	t.slow.splitAll(text, func(w string) bool {
		if len(w) <= maxCachedWord {
			n += len(t.word(w))
		} else {
			var k int
			k, err = t.countLong(ctx, w, &sc)
			n += k
			if err != nil {
				return false
			}
		}
		if done += len(w); done >= check {
			if err = ctx.Err(); err != nil {
				return false
			}
			check = done + countCheckBytes
		}
		return true
	})
	putScratch(sc)
	return n, err
}

// Decode implements [Tokenizer].
func (t *bpe) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.pieces) {
			b.WriteString(t.pieces[id])
		}
	}
	s := b.String()
	if t.decodeStrip && len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return s
}

// word returns the ids of one pre-token of at most maxCachedWord bytes,
// from the cache when possible. The result is shared: callers must not
// modify it.
func (t *bpe) word(w string) []int32 {
	if len(w) == 0 {
		return nil
	}
	if ids, ok := t.cache.get(w); ok {
		return ids
	}
	var buf [16]int32
	if id, ok := t.vocab[w]; ok && t.ignoreMerges {
		return t.cache.put(w, append(buf[:0], id))
	}
	if len(w) > len(symbolsOnStack{}) {
		sc := getScratch()
		t.mergePiece(sc, w)
		ids := t.cache.put(w, sc.ids)
		putScratch(sc)
		return ids
	}
	var (
		syms [len(symbolsOnStack{})]symbol
		cand [len(symbolsOnStack{})]candidate
	)
	h := candHeap{c: cand[:0]}
	ids, _, _ := t.merge(w, buf[:0], syms[:0], &h)
	return t.cache.put(w, ids)
}

// symbolsOnStack sizes the merge buffers word keeps on its stack: words
// up to this many bytes merge without allocating.
type symbolsOnStack [64]struct{}

// maxMergeBytes bounds one merge. A pre-token longer than this is merged
// in pieces of at most this many bytes, cut at a character boundary, so
// its work is linear in its length (the merge of n symbols is O(n log n)
// and slows further once its symbols outgrow the CPU caches) and its
// memory bounded (about 50 bytes per byte of a piece). A merge never
// crosses a cut, so a count of such a word can differ from the unbounded
// merge's by about one token per cut. Real text has no pre-token this
// long (the longest are Thai sentences, a few hundred bytes, and runs of
// punctuation or spaces); a server's "aaaa…" or a base64 blob does. 1 KiB
// costs about 1.35× the merge work per byte of 256 bytes, 4 KiB about 2.2×.
const maxMergeBytes = 1 << 10

// mergeScratch is the memory of merging long words, reused through
// scratchPool; steps counts the merge work done with it (symbols and heap
// moves), which tests use to check that it stays linear. ids are the
// ids of piece, the last piece merged (by one tokenizer: putScratch
// forgets it), which a word of one repeated piece ("aaaa…") reuses.
type mergeScratch struct {
	syms  []symbol
	cand  []candidate
	ids   []int32
	piece string
	steps int
}

var scratchPool = sync.Pool{New: func() any { return new(mergeScratch) }}

func getScratch() *mergeScratch { return scratchPool.Get().(*mergeScratch) }

func putScratch(sc *mergeScratch) {
	if sc != nil {
		sc.piece = "" // neither pin the text nor serve another tokenizer
		scratchPool.Put(sc)
	}
}

// mergePiece merges one piece of at most maxMergeBytes into sc.ids.
func (t *bpe) mergePiece(sc *mergeScratch, w string) {
	if len(w) == len(sc.piece) && w == sc.piece {
		return // the same piece again: its ids are there
	}
	h := candHeap{c: sc.cand[:0]}
	sc.ids, sc.syms, sc.cand = t.merge(w, sc.ids[:0], sc.syms[:0], &h)
	sc.piece = w
	sc.steps += h.steps
}

// spaceMark is SentencePiece's visible space.
const spaceMark = "▁"

// pieceEnd returns the end of the next piece of a long word: all of w
// when it fits maxMergeBytes, else a cut at most maxMergeBytes in, at the
// start of a character and, when there is one in the last quarter, before
// a space or SentencePiece's space mark.
func pieceEnd(w string) int {
	if len(w) <= maxMergeBytes {
		return len(w)
	}
	for k := maxMergeBytes; k > maxMergeBytes*3/4; k-- {
		if w[k] == ' ' || strings.HasPrefix(w[k:], spaceMark) {
			return k
		}
	}
	k := maxMergeBytes
	for k > maxMergeBytes-utf8.UTFMax && !utf8.RuneStart(w[k]) {
		k--
	}
	return k
}

// appendLong appends the ids of a pre-token longer than maxCachedWord
// (never cached), merged piece by piece in scratch memory taken from the
// pool into *sc on first use.
func (t *bpe) appendLong(dst []int, w string, sc **mergeScratch) []int {
	if *sc == nil {
		*sc = getScratch()
	}
	for len(w) > 0 {
		k := pieceEnd(w)
		t.mergePiece(*sc, w[:k])
		for _, id := range (*sc).ids {
			dst = append(dst, int(id))
		}
		w = w[k:]
	}
	return dst
}

// countLong counts the ids of a pre-token longer than maxCachedWord, as
// appendLong would append them, looking at ctx between pieces.
func (t *bpe) countLong(ctx context.Context, w string, sc **mergeScratch) (int, error) {
	if *sc == nil {
		*sc = getScratch()
	}
	n := 0
	for len(w) > 0 {
		k := pieceEnd(w)
		t.mergePiece(*sc, w[:k])
		n += len((*sc).ids)
		w = w[k:]
		if len(w) > 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// symbol is one part of a word during merging: a doubly linked list node
// over the initial symbols. rank/id describe the merge of this part with
// the next one (noRank when they cannot merge).
type symbol struct {
	start, end int32
	prev, next int32
	id         int32
	rank       uint32
	mergedID   int32
}

const noRank = ^uint32(0)

// merge runs byte-pair encoding on one word (at most maxMergeBytes):
// repeatedly merge the adjacent pair with the lowest rank, leftmost first
// among equal ranks. That is both tiktoken's rule and the Hugging Face BPE
// model's rule. O(n log n) with a heap of candidates; stale heap entries
// are skipped. It appends the ids to out and works in syms and h, and
// returns them all grown: the caller keeps them for the next word.
func (t *bpe) merge(w string, out []int32, syms []symbol, h *candHeap) ([]int32, []symbol, []candidate) {
	if t.byteLevel {
		for i := 0; i < len(w); i++ {
			syms = append(syms, symbol{start: int32(i), end: int32(i + 1), id: t.byteIDs[w[i]]})
		}
	} else {
		syms = t.runeSymbols(syms, w)
	}
	n := int32(len(syms))
	for i := range syms {
		syms[i].prev = int32(i) - 1
		syms[i].next = int32(i) + 1
	}
	syms[n-1].next = -1
	h.steps += int(n)

	for i := int32(0); i+1 < n; i++ {
		t.rankPair(w, syms, i)
		if syms[i].rank != noRank {
			h.c = append(h.c, candidate{syms[i].rank, i})
		}
	}
	h.init()
	for len(h.c) > 0 {
		top := h.pop()
		i := top.pos
		if syms[i].rank != top.rank || syms[i].end == -1 {
			continue
		}
		j := syms[i].next
		syms[i].id = syms[i].mergedID
		syms[i].end = syms[j].end
		syms[i].next = syms[j].next
		syms[j].end = -1 // removed
		if k := syms[j].next; k >= 0 {
			syms[k].prev = i
		}
		t.rankPair(w, syms, i)
		if syms[i].rank != noRank {
			h.push(candidate{syms[i].rank, i})
		}
		if p := syms[i].prev; p >= 0 {
			t.rankPair(w, syms, p)
			if syms[p].rank != noRank {
				h.push(candidate{syms[p].rank, p})
			}
		}
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		if t.fuseUnk && syms[i].id == t.unk && len(out) > 0 && out[len(out)-1] == t.unk {
			continue
		}
		out = append(out, syms[i].id)
	}
	return out, syms, h.c
}

// rankPair sets the merge rank and result of syms[i] with its successor.
func (t *bpe) rankPair(w string, syms []symbol, i int32) {
	s := &syms[i]
	s.rank, s.mergedID = noRank, -1
	j := s.next
	if j < 0 {
		return
	}
	if t.bytePairs != nil && s.end-s.start == 1 && syms[j].end-syms[j].start == 1 && t.byteLevel {
		m := t.bytePairs[int(w[s.start])<<8|int(w[syms[j].start])]
		s.rank, s.mergedID = m.rank, m.id
		return
	}
	if t.concatRank {
		if id, ok := t.vocab[w[s.start:syms[j].end]]; ok {
			s.rank, s.mergedID = uint32(id), id
		}
		return
	}
	if m, ok := t.pairs[pairKey(s.id, syms[j].id)]; ok {
		s.rank, s.mergedID = m.rank, m.id
	}
}

// initBytePairs fills bytePairs for a byte-level tokenizer whose vocab,
// byteIDs and pairs are set.
func (t *bpe) initBytePairs() {
	t.bytePairs = make([]merge, 1<<16)
	for a := range 256 {
		for b := range 256 {
			m := merge{rank: noRank, id: -1}
			if t.concatRank {
				if id, ok := t.vocab[string([]byte{byte(a), byte(b)})]; ok {
					m = merge{rank: uint32(id), id: id}
				}
			} else if p, ok := t.pairs[pairKey(t.byteIDs[a], t.byteIDs[b])]; ok {
				m = p
			}
			t.bytePairs[a<<8|b] = m
		}
	}
}

// runeSymbols appends the initial symbols of a SentencePiece-style word:
// one per rune found in the vocabulary, else one per byte of its UTF-8
// encoding as <0xXX> fallback tokens, else the unknown token.
func (t *bpe) runeSymbols(syms []symbol, w string) []symbol {
	for i := 0; i < len(w); {
		_, size := utf8.DecodeRuneInString(w[i:])
		if id, ok := t.vocab[w[i:i+size]]; ok {
			syms = append(syms, symbol{start: int32(i), end: int32(i + size), id: id})
		} else if t.fallback[w[i]] >= 0 {
			for k := i; k < i+size; k++ {
				syms = append(syms, symbol{start: int32(k), end: int32(k + 1), id: t.fallback[w[k]]})
			}
		} else {
			syms = append(syms, symbol{start: int32(i), end: int32(i + size), id: t.unk})
		}
		i += size
	}
	return syms
}

type candidate struct {
	rank uint32
	pos  int32
}

// candHeap is a binary min-heap ordered by rank, then position, so that
// among equal ranks the leftmost pair merges first. steps counts its
// moves (and what merge adds), the measure of merge work.
type candHeap struct {
	c     []candidate
	steps int
}

func (h *candHeap) less(a, b int) bool {
	if h.c[a].rank != h.c[b].rank {
		return h.c[a].rank < h.c[b].rank
	}
	return h.c[a].pos < h.c[b].pos
}

func (h *candHeap) init() {
	for i := len(h.c)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) push(c candidate) {
	h.c = append(h.c, c)
	for i := len(h.c) - 1; i > 0; {
		h.steps++
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.c[i], h.c[p] = h.c[p], h.c[i]
		i = p
	}
}

func (h *candHeap) pop() candidate {
	top := h.c[0]
	last := len(h.c) - 1
	h.c[0] = h.c[last]
	h.c = h.c[:last]
	h.down(0)
	return top
}

func (h *candHeap) down(i int) {
	for {
		h.steps++
		c := 2*i + 1
		if c >= len(h.c) {
			return
		}
		if r := c + 1; r < len(h.c) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h.c[i], h.c[c] = h.c[c], h.c[i]
		i = c
	}
}

// wordCache is a two-way set-associative cache from a word to its ids:
// a word may live in either slot of its pair; a new word takes an empty
// slot, else replaces the one its hash picks. Lookups and stores are
// atomic loads and stores of immutable entries, so it is safe for
// concurrent use without locks, and its size is bounded by
// cacheSlots × (maxCachedWord + entry overhead).
type wordCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[cacheEntry]
}

// cacheEntry is immutable once stored. The common case (a word of at
// most inlineWord bytes and at most inlineIDs ids) sits in one 64-byte
// cache line, so a hit costs one load after the slot's: no pointer chasing
// to the word's bytes or the ids.
type cacheEntry struct {
	hash uint64
	wlen uint8
	n    uint8 // ids in ids3; 0 = see long
	_    [2]byte
	ids3 [inlineIDs]int32
	word [inlineWord]byte
	long *longEntry // words or id lists that do not fit inline
}

type longEntry struct {
	word string
	ids  []int32
}

const (
	inlineIDs     = 3
	inlineWord    = 40
	cacheSlots    = 1 << 17
	maxCachedWord = 128
)

func newWordCache() wordCache {
	return wordCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[cacheEntry], cacheSlots)}
}

func (e *cacheEntry) match(h uint64, w string) ([]int32, bool) {
	if e == nil || e.hash != h {
		return nil, false
	}
	if e.long != nil {
		if e.long.word == w {
			return e.long.ids, true
		}
		return nil, false
	}
	if int(e.wlen) == len(w) && string(e.word[:e.wlen]) == w {
		return e.ids3[:e.n], true
	}
	return nil, false
}

func (c *wordCache) get(w string) ([]int32, bool) {
	if len(w) > maxCachedWord {
		return nil, false
	}
	h := maphash.String(c.seed, w)
	i := h & (cacheSlots - 1)
	if ids, ok := c.slots[i].Load().match(h, w); ok {
		return ids, true
	}
	return c.slots[i^1].Load().match(h, w)
}

// put caches ids (which the cache copies: the caller may reuse them) and
// returns the cached copy, which callers must not modify.
func (c *wordCache) put(w string, ids []int32) []int32 {
	if len(w) > maxCachedWord {
		return slices.Clone(ids)
	}
	h := maphash.String(c.seed, w)
	e := &cacheEntry{hash: h}
	var stored []int32
	if len(w) <= inlineWord && len(ids) <= inlineIDs && len(ids) > 0 {
		e.wlen = uint8(len(w))
		copy(e.word[:], w)
		e.n = uint8(copy(e.ids3[:], ids))
		stored = e.ids3[:e.n]
	} else {
		stored = slices.Clone(ids)
		e.long = &longEntry{word: strings.Clone(w), ids: stored}
	}
	i := h & (cacheSlots - 1)
	if c.slots[i].Load() != nil && c.slots[i^1].Load() == nil {
		i ^= 1
	}
	c.slots[i].Store(e)
	return stored
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// VocabSize implements [Vocabulary].
func (t *bpe) VocabSize() int { return len(t.pieces) }

// Piece implements [Vocabulary].
func (t *bpe) Piece(id int) (string, bool) {
	if id < 0 || id >= len(t.pieces) || t.pieces[id] == "" {
		return "", false
	}
	return t.pieces[id], true
}
