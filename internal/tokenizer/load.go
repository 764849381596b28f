package tokenizer

import (
	"fmt"
)

// Load returns the tokenizer named by spec:
//
//   - "builtin" (or "o200k_base"): [Builtin]; "cl100k_base", "p50k_base"
//     and "r50k_base" name the other embedded tiktoken vocabularies;
func Load(spec string) (Tokenizer, error) {
	switch spec {
	case "", "builtin":
		return Builtin()
	}
	for _, e := range tiktokenEncodings {
		if e.name == spec {
			return tiktoken(spec)
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, spec)
}
