package prompt

import (
	"strings"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// TestCorpusPrompts: with a corpus, prompts still have exactly the
// row's length in tokens and share exactly their common leading blocks,
// are made of the corpus's words only, and read the corpus in order
// (after a block's first word, each next word follows its predecessor
// somewhere in the corpus).
func TestCorpusPrompts(t *testing.T) {
	for _, name := range []string{CorpusSonnet, CorpusCoding} {
		t.Run(name, func(t *testing.T) {
			words, err := CorpusWords(name)
			if err != nil {
				t.Fatal(err)
			}
			inCorpus := map[string]bool{}
			follows := map[[2]string]bool{}
			for i, w := range words {
				inCorpus[w] = true
				if i > 0 {
					follows[[2]string{words[i-1], w}] = true
				}
			}
			tok := mustLoad(t, "builtin")
			cfg := NewConfig()
			cfg.Corpus = words
			s := mustBuilder(t, tok, cfg)
			if st := s.Stats(); st.Words < MinWords {
				t.Fatalf("%d words in the vocabulary", st.Words)
			}
			rows := []trace.Row{
				{Index: 0, InputTokens: 100, BlockSize: 64, HashIDs: []uint64{1, 2}},
				{Index: 1, InputTokens: 120, BlockSize: 64, HashIDs: []uint64{1, 3}},
				{Index: 2, InputTokens: 57},
			}
			if err := s.Prepare(rows); err != nil {
				t.Fatal(err)
			}
			var ps []Prompt
			for i := range rows {
				var p Prompt
				if err := s.Build(&rows[i], &p); err != nil {
					t.Fatal(err)
				}
				if n := tok.Count(p.Text); n != rows[i].InputTokens {
					t.Errorf("row %d: %d tokens, want %d", i, n, rows[i].InputTokens)
				}
				ps = append(ps, p)
				f := strings.Fields(p.Text)
				inOrder := 0
				for j, w := range f {
					if !inCorpus[w] {
						t.Fatalf("row %d: word %q is not in the corpus", i, w)
					}
					if j > 0 && follows[[2]string{f[j-1], w}] {
						inOrder++
					}
				}
				// Block starts (and the words the tokenizer left out
				// between two kept ones) break the order; most pairs
				// follow each other in the corpus.
				if inOrder < len(f)*2/3 {
					t.Errorf("row %d: %d of %d word pairs follow each other in the corpus", i, inOrder, len(f)-1)
				}
			}
			a, b := tok.Encode(ps[0].Text), tok.Encode(ps[1].Text)
			k := 0
			for k < len(a) && k < len(b) && a[k] == b[k] {
				k++
			}
			if k != 64 {
				t.Errorf("rows 0 and 1 share %d leading tokens, want 64 (one block)", k)
			}
		})
	}
	if _, err := CorpusWords("poems"); err == nil || !strings.Contains(err.Error(), "want sonnet or coding") {
		t.Errorf("unknown corpus: %v", err)
	}
}
