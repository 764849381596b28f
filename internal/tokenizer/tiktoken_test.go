package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// TestEmbeddedVocabularies pins the embedded files to OpenAI's published
// sha256 (the expected_hash values in openai/tiktoken's openai_public.py).
func TestEmbeddedVocabularies(t *testing.T) {
	want := map[string]string{
		"o200k_base.tiktoken":  "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
		"cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
		"p50k_base.tiktoken":   "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
		"r50k_base.tiktoken":   "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
	}
	for file, sum := range want {
		data, err := assets.Assets.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, want %s", file, got, sum)
		}
	}
}

// oracleSamples exercise every alternative of the split patterns.
var oracleSamples = []string{
	"",
	"hello world",
	"Hello, world! It's 2024-11-21 and we're testing 1234567 things.",
	"  leading and trailing spaces   ",
	"tabs\tand\nnewlines\r\n\r\nand   \n  mixed \t\n",
	"CamelCaseWords and HTTPServer and XMLHttpRequest's I'LL WE'VE",
	"path/to/file.go:12: x := y // comment\n\tif a != b { return }",
	"ünïcödé wörds, 日本語のテキスト, emoji 🎉🎉 and Ωmega ΣΑΣ",
	"numbers 1 12 123 1234 12345 ١٢٣٤ and ½",
	"\u00a0non-breaking\u00a0space and\u2003em space and \u3000ideographic",
	"'s 't 're 've 'm 'll 'd 'S 'RE 'x",
	"a  b   c    d\n\n\ne",
	"!!!???...,,,;;;:::/// ///\n",
	"x\v\fy \v z",
}

// TestTiktokenGolden checks ids computed by github.com/tiktoken-go/tokenizer
// v0.10.0 (which agree with OpenAI's tiktoken on these strings).
func TestTiktokenGolden(t *testing.T) {
	tests := []struct {
		enc, text string
		want      []int
	}{
		{"o200k_base", "hello world", []int{0x6150, 0x947}},
		{"o200k_base", "Hello, world! It's 2024-11-21 and we're testing 1234567 things.", []int{0x33a9, 0xb, 0x947, 0x0, 0x1e40, 0xdc, 0x52b, 0x13, 0xc, 0x3e2, 0xc, 0x7f8, 0x146, 0x3e39, 0x2ce5, 0xdc, 0x1dd1, 0x4b9a, 0x16, 0xcd3, 0xd}},
		{"o200k_base", "ünïcödé wörds, 日本語のテキスト, emoji 🎉", []int{0x11a3, 0x2eb8f, 0xa969, 0x179, 0x11e, 0xb3d, 0x216f, 0xb, 0x4414, 0x9fcd, 0xd39, 0x3eb8, 0x47c0, 0x955c, 0xb, 0x122e7, 0x2220a, 0xe7}},
		{"o200k_base", "path/to/file.go:12: x := y // comment\n\tif a != b { return }", []int{0x105d, 0x11a27, 0xca36, 0x802c, 0x19, 0x383, 0x19, 0x4bf, 0xd4d, 0x156, 0x25a, 0x14ff, 0xc6, 0x4c8, 0x105, 0x682, 0x11f, 0x162, 0x26e, 0x184}},
		{"cl100k_base", "hello world", []int{0x3beb, 0x77d}},
		{"cl100k_base", "Hello, world! It's 2024-11-21 and we're testing 1234567 things.", []int{0x26b2, 0xb, 0x77d, 0x0, 0x44e, 0x254, 0xdc, 0x93e, 0x13, 0xc, 0x326, 0xc, 0x69b, 0x143, 0x248, 0x92f, 0x1de1, 0xdc, 0x11a1, 0x2ad1, 0x16, 0xa0e, 0xd}},
		{"cl100k_base", "ünïcödé wörds, 日本語のテキスト, emoji 🎉", []int{0x404d, 0x9710, 0x42, 0xbd5, 0x43, 0x3d2, 0x121, 0x2583, 0x155d, 0xb, 0x12ad6, 0x5880, 0xb35e, 0xfc, 0x3f10, 0xe24d, 0xf5b7, 0x117d2, 0xb, 0xa9c9, 0x2c92, 0xec, 0xe7}},
		{"cl100k_base", "path/to/file.go:12: x := y // comment\n\tif a != b { return }", []int{0x95e, 0x82f9, 0x6111, 0x4837, 0x19, 0x2cd, 0x19, 0x361, 0x6a7, 0x17b, 0x1bb, 0xfe4, 0xc6, 0x2ec, 0x108, 0x3d0, 0x125, 0x13a, 0x1d7, 0x14f}},
	}
	for _, tt := range tests {
		tok, err := Load(tt.enc)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tt.want, tok.Encode(tt.text)); d != "" {
			t.Errorf("%s Encode(%q) (-want +got):\n%s", tt.enc, tt.text, d)
		}
	}
}

// TestTiktokenMatchesOracle compares Encode with a slow, independent
// version: the pattern run by a backtracking regexp engine (regexp2, as
// tiktoken's fancy-regex does) and a quadratic merge loop.
func TestTiktokenMatchesOracle(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base", "r50k_base"} {
		t.Run(name, func(t *testing.T) {
			tok, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			b := tok.(*bpe)
			var pattern string
			for _, e := range tiktokenEncodings {
				if e.name == name {
					pattern = e.pattern
				}
			}
			// Wrapping the pattern keeps regexp2 from using the
			// pre-generated matcher tiktoken-go registers for the bare
			// pattern, which splits "\n \n" differently from a backtracking
			// engine.
			re := regexp2.MustCompile("(?:"+pattern+")", regexp2.None)
			for _, s := range randomSamples(300, 40) {
				var want []int
				m, err := re.FindStringMatch(s)
				for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
					want = append(want, naiveMerge(b, m.String())...)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := tok.Encode(s)
				if len(want) == 0 && len(got) == 0 {
					continue
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("Encode(%q) mismatch (-oracle +got):\n%s", s, d)
				}
				if n := tok.Count(s); n != len(want) {
					t.Errorf("Count(%q) = %d, want %d", s, n, len(want))
				}
				if d := tok.Decode(got); d != s {
					t.Errorf("Decode(Encode(%q)) = %q", s, d)
				}
			}
		})
	}
}

// randomSamples returns oracleSamples plus n random strings of up to
// maxLen characters drawn from an alphabet that hits every pattern branch.
func randomSamples(n, maxLen int) []string {
	samples := append([]string(nil), oracleSamples...)
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAzZ09 '\t\n\r\v/.,!é日🎉\u00a0sSrReEvVlLmMdD")
	for range n {
		var b strings.Builder
		for range r.IntN(maxLen) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		samples = append(samples, b.String())
	}
	return samples
}

// naiveMerge is tiktoken's byte-pair merge written the obvious way: merge
// the leftmost lowest-ranked adjacent pair until none is in the vocabulary.
func naiveMerge(b *bpe, w string) []int {
	if id, ok := b.vocab[w]; ok {
		return []int{int(id)}
	}
	parts := make([]string, 0, len(w))
	for i := range len(w) {
		parts = append(parts, w[i:i+1])
	}
	for {
		best, bestRank := -1, int32(-1)
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := b.vocab[parts[i]+parts[i+1]]; ok && (best < 0 || r < bestRank) {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		parts = append(parts[:best], append([]string{parts[best] + parts[best+1]}, parts[best+2:]...)...)
	}
	ids := make([]int, len(parts))
	for i, p := range parts {
		ids[i] = int(b.vocab[p])
	}
	return ids
}

// TestFastSplitMatchesRegexp compares the ASCII matchers with the regexp
// translation of the same pattern on random ASCII text.
func TestFastSplitMatchesRegexp(t *testing.T) {
	for _, pat := range []string{patO200k, patCL100k, patQwen2, patGPT2} {
		fast := fastSplitter(pat)
		slow, err := newRegexSplitter(pat)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 4))
		const alphabet = "aAbZz09 '\t\n\r\v\f/.,!-_sSrReEvVlLmMdDtT\x00\x7f"
		for range 3000 {
			b := make([]byte, r.IntN(30)+1)
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			checkSplit(t, fast, slow, string(b))
		}
	}
}

func checkSplit(t *testing.T, fast splitter, slow *regexSplitter, s string) {
	t.Helper()
	var want, got []string
	slow.splitAll(s, func(w string) bool { want = append(want, w); return true })
	nextSplitter{fast}.splitAll(s, func(w string) bool { got = append(got, w); return true })
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("split %q (-regexp +fast):\n%s", s, d)
	}
}
