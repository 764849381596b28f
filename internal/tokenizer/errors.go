package tokenizer

import "errors"

// The errors exposed.
var (
	// ErrNotFound is returned by [Load] when no tokenizer exists at the
	// spec; the error text lists every place that was searched.
	ErrNotFound = errors.New("tokenizer not found")
	// ErrUnsupported is returned by [Load] for a tokenizer.json that uses a
	// model, normalizer or pre-tokenizer this package does not implement.
	ErrUnsupported = errors.New("unsupported tokenizer")
)
