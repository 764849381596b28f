package prompt

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/internal/tokenizer/tokenizertest"
	"github.com/reprise-bench/reprise/trace"
)

// largeLlama3 is a Llama-3-style tokenizer.json built from the 40,000
// lowest cl100k_base ranks: big enough to offer more single-token words
// than any block of the Mooncake traces has children.
const largeLlama3Tokens = 40000

var (
	largeOnce sync.Once
	largePath string
	largeErr  error
)

// largeTokenizer writes the large Llama-3-style tokenizer.json once per
// test binary and loads it through tokenizer.Load, as a user's file would be.
func largeTokenizer(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	largeOnce.Do(func() {
		var data []byte
		data, largeErr = tokenizertest.Llama3Style(largeLlama3Tokens)
		if largeErr != nil {
			return
		}
		dir, err := os.MkdirTemp("", "prompt-llama3-")
		if err != nil {
			largeErr = err
			return
		}
		largePath, largeErr = tokenizertest.Write(dir, data)
	})
	if largeErr != nil {
		t.Fatal(largeErr)
	}
	tok, err := tokenizer.Load(largePath)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func mustLoad(t testing.TB, spec string) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func mustBuilder(t testing.TB, tok tokenizer.Tokenizer, cfg Config) *Builder {
	t.Helper()
	s, err := New(tok, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readTrace(t testing.TB, name string) []trace.Row {
	t.Helper()
	rows, _, err := trace.ReadAll(testfiles.Trace(t, "mooncake/"+name), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestMain(m *testing.M) {
	code := m.Run()
	if largePath != "" {
		os.RemoveAll(filepath.Dir(largePath))
	}
	os.Exit(code)
}
