package tokenizer_test

import (
	"fmt"

	"github.com/reprise-bench/reprise/internal/tokenizer"
)

func ExampleBuiltin() {
	tok, err := tokenizer.Builtin()
	if err != nil {
		panic(err)
	}
	ids := tok.Encode("hello world")
	fmt.Println(tok.Name(), ids, tok.Count("hello world"), tok.Decode(ids))
	// Output: o200k_base [24912 2375] 2 hello world
}

func ExampleLoad() {
	// A tokenizer.json file or a directory holding one; a model id such as
	// "meta-llama/Llama-3.1-8B" is looked up in the local Hugging Face cache.
	// This test file keeps only 1,000 tokens of a Llama-3-style vocabulary,
	// hence more tokens than the real one would give.
	tok, err := tokenizer.Load("testdata/llama3-style")
	if err != nil {
		panic(err)
	}
	fmt.Println(tok.Count("It was the best of times."))
	// Output: 11
}
