//go:build !invariants

package analyze

// invariants turns on expensive self-checks (make test builds with
// -tags invariants).
const invariants = false
