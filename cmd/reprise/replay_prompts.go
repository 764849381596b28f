package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
)

// wordPrompts synthesizes prompts of exactly InputTokens tokens from words
// that are one token each with a leading space, so " w1 w2 … wn" is n
// tokens for the run's tokenizer (checked word by word at start). A row's
// block with hash id h is the first `size` words of a sequence seeded by
// h, so equal ids give equal text and a partial block is a prefix of the
// full one; rows without ids get words seeded by their row index.
type wordPrompts struct {
	words    []string
	expected []int32 // expected cached tokens by row position; nil = unknown
	rows     []trace.Row
	pos      map[int64]int32 // row Index → position, when they differ
}

var _ engine.PromptSource = (*wordPrompts)(nil)

// candidateWords are common lower-case English words; those that are not
// a single token (with a leading space) for the tokenizer are dropped.
const candidateWords = "the of and to in is was for that on as with by he at from his it an were are which this be or " +
	"has had not but have first one their its new after who they two her she been other when there all during into " +
	"school time may years more most only over city some world would where later up such used many can state about " +
	"national out known university united then made under well could north war american three season team between " +
	"south also these him both while being film series game played number year part group since people through high " +
	"work place area would music york de county four early river before second out based main home district government " +
	"album five public following house age life band members several family won best river club own old order general"

func newWordPrompts(tok tokenizer.Tokenizer, rows []trace.Row) (*wordPrompts, error) {
	p := &wordPrompts{rows: rows}
	seen := map[string]bool{}
	for _, w := range strings.Fields(candidateWords) {
		if seen[w] {
			continue
		}
		seen[w] = true
		if tok.Count(" "+w) == 1 {
			p.words = append(p.words, w)
		}
	}
	if len(p.words) < 32 {
		return nil, fmt.Errorf("tokenizer %s: only %d of the prompt words are single tokens; use --tokenizer builtin", tok.Name(), len(p.words))
	}
	// Check the construction once: a random 2,000-word prompt must be
	// exactly 2,000 tokens.
	var b strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b.WriteByte(' ')
		b.WriteString(p.words[rng.IntN(len(p.words))])
	}
	if n := tok.Count(b.String()); n != 2000 {
		return nil, fmt.Errorf("tokenizer %s merges across words (%d tokens for 2000 words); use --tokenizer builtin", tok.Name(), n)
	}
	if rows != nil {
		p.expected = expectedCached(rows)
		for i := range rows {
			if rows[i].Index != int64(i) {
				p.pos = make(map[int64]int32, len(rows))
				for j := range rows {
					p.pos[rows[j].Index] = int32(j)
				}
				break
			}
		}
	}
	return p, nil
}

// expectedCached computes, in trace order, the tokens an infinite prefix
// cache could reuse for each row: the leading run of blocks whose hash ids
// were seen in earlier rows.
func expectedCached(rows []trace.Row) []int32 {
	out := make([]int32, len(rows))
	seen := map[uint64]struct{}{}
	for i := range rows {
		r := &rows[i]
		if len(r.HashIDs) == 0 || r.BlockSize <= 0 {
			out[i] = -1
			continue
		}
		n := 0
		for k, h := range r.HashIDs {
			if _, ok := seen[h]; !ok {
				break
			}
			n += blockLen(r, k)
		}
		out[i] = int32(n)
		for _, h := range r.HashIDs {
			seen[h] = struct{}{}
		}
	}
	return out
}

// blockLen is the length of block k of r: BlockSize, the last block the rest.
func blockLen(r *trace.Row, k int) int {
	if k < len(r.HashIDs)-1 {
		return r.BlockSize
	}
	return r.InputTokens - (len(r.HashIDs)-1)*r.BlockSize
}

// validate checks that every row's hash ids fit its length.
func (p *wordPrompts) validate(rows []trace.Row) error {
	var errs []error
	for i := range rows {
		r := &rows[i]
		if len(r.HashIDs) == 0 || r.BlockSize <= 0 {
			continue
		}
		if last := blockLen(r, len(r.HashIDs)-1); last <= 0 || last > r.BlockSize {
			errs = append(errs, fmt.Errorf("line %d: input_length %d does not fit %d hash ids of %d tokens (the last block would be %d tokens)",
				r.Line, r.InputTokens, len(r.HashIDs), r.BlockSize, last))
			if len(errs) == 20 {
				errs = append(errs, errors.New("… (more rows like these)"))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Prompt implements engine.PromptSource.
func (p *wordPrompts) Prompt(row *trace.Row, in *adapter.BuildInput) (int, int, error) {
	var b strings.Builder
	b.Grow(row.InputTokens * 6)
	n := 0
	if len(row.HashIDs) > 0 && row.BlockSize > 0 {
		for k, h := range row.HashIDs {
			size := blockLen(row, k)
			if size <= 0 || size > row.BlockSize {
				return 0, 0, fmt.Errorf("input_length %d does not fit %d hash ids of %d tokens", row.InputTokens, len(row.HashIDs), row.BlockSize)
			}
			p.appendWords(&b, rand.New(rand.NewPCG(h, 0x5eed)), size)
			n += size
		}
	} else {
		p.appendWords(&b, rand.New(rand.NewPCG(uint64(row.Index)+1<<40, in.Seed)), row.InputTokens)
		n = row.InputTokens
	}
	in.PromptText = b.String()
	exp := -1
	if p.expected != nil && row.Index >= 0 {
		if i := p.rowPos(row); i >= 0 {
			exp = int(p.expected[i])
		}
	}
	return n, exp, nil
}

func (p *wordPrompts) appendWords(b *strings.Builder, rng *rand.Rand, n int) {
	for range n {
		b.WriteByte(' ')
		b.WriteString(p.words[rng.IntN(len(p.words))])
	}
}

// rowPos finds the row's position in the sorted trace (Index is the file
// position; they coincide unless the trace was re-sorted).
func (p *wordPrompts) rowPos(row *trace.Row) int {
	if p.pos != nil {
		if i, ok := p.pos[row.Index]; ok {
			return int(i)
		}
		return -1
	}
	if i := int(row.Index); i >= 0 && i < len(p.rows) {
		return i
	}
	return -1
}
