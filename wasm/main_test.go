package wasm_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/reprise-bench/reprise/wasm"
)

// Adapters are compiled once per test binary and shared by the tests
// (compiling a Go guest takes a second or more cold; the on-disk cache
// makes later runs fast).
var (
	loadMu sync.Mutex
	loaded = map[string]*wasm.Adapter{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, a := range loaded {
		a.Close(context.Background())
	}
	os.Exit(code)
}

// load returns the shared adapter for spec (a shipped name or a path).
func load(t testing.TB, spec string) *wasm.Adapter {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if a, ok := loaded[spec]; ok {
		return a
	}
	a, err := wasm.Load(context.Background(), spec, wasm.Config{})
	if err != nil {
		t.Fatalf("load %s: %v", spec, err)
	}
	loaded[spec] = a
	return a
}
