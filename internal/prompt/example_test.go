package prompt_test

import (
	"fmt"

	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
)

// Two Bailian-style rows (16-token blocks) share their first two blocks:
// their prompts share exactly 32 tokens, and the second one expects those
// 32 tokens to be cached.
func Example() {
	tok, err := tokenizer.Builtin()
	if err != nil {
		panic(err)
	}
	cfg := prompt.NewConfig()
	cfg.Format = prompt.FormatTokenIDs
	s, err := prompt.New(tok, cfg)
	if err != nil {
		panic(err)
	}
	rows := []trace.Row{
		{Index: 0, InputTokens: 40, BlockSize: 16, HashIDs: []uint64{7, 8, 9}},
		{Index: 1, InputTokens: 45, BlockSize: 16, HashIDs: []uint64{7, 8, 10}},
	}
	if err := s.Prepare(rows); err != nil {
		panic(err)
	}
	var a, b prompt.Prompt
	if err := s.Build(&rows[0], &a); err != nil {
		panic(err)
	}
	if err := s.Build(&rows[1], &b); err != nil {
		panic(err)
	}
	shared := 0
	for shared < len(a.TokenIDs) && a.TokenIDs[shared] == b.TokenIDs[shared] {
		shared++
	}
	fmt.Println("tokens:", tok.Count(a.Text), tok.Count(b.Text))
	fmt.Println("shared:", shared)
	fmt.Println("expected cached:", a.ExpectedCachedTokens, b.ExpectedCachedTokens)
	// Output:
	// tokens: 40 45
	// shared: 32
	// expected cached: 0 32
}
