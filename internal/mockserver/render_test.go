package mockserver

import (
	"strings"
	"testing"
)

// TestFillersAreTokens: the output text of any choice, of any length,
// tokenizes with the builtin tokenizer to exactly as many tokens as the
// server reports, so a client's count of the streamed text (and its ITL,
// which divides by that count) agrees with usage.completion_tokens.
func TestFillersAreTokens(t *testing.T) {
	tok, err := DefaultTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range fillers {
		if n := len(tok.AppendEncode(nil, w)); n != 1 {
			t.Errorf("filler %d %q is %d tokens", i, w, n)
		}
	}
	for c := range 4 {
		var b strings.Builder
		for k := range 300 {
			b.WriteString(filler(k, c))
			if k%37 == 0 || k == 299 {
				if n := len(tok.AppendEncode(nil, b.String())); n != k+1 {
					t.Fatalf("choice %d: %d tokens of text count as %d: %q", c, k+1, n, b.String())
				}
			}
		}
	}
}
