// Package conformance checks, for tests, that a parser other than the
// native one (a Wasm guest, a template adapter) classifies every recorded
// server response exactly as the native parser does.
package conformance

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/wasm"
)

// ParsesLikeNative checks that other produces exactly native's records
// and final summary, and fails where native fails, on every recorded
// server response (testfiles.ServerResponses), in one batch and in
// batches of 3 events. label names other in the messages; prefix is put
// before each recording's name.
func ParsesLikeNative(t testing.TB, native, other adapter.Instance, label, prefix string) {
	t.Helper()
	for _, f := range testfiles.ServerResponses(t) {
		rec, err := wasm.ReadRecording(f)
		if err != nil {
			t.Fatal(err)
		}
		name := prefix + filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		for _, batch := range []int{0, 3} {
			want, werr := wasm.Classify(native, 1, rec, adapter.FramingSSE, batch)
			got, gerr := wasm.Classify(other, 1, rec, adapter.FramingSSE, batch)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s batch %d: native error %v, %s error %v", name, batch, werr, label, gerr)
			}
			if len(want.Records) == 0 && werr == nil {
				t.Errorf("%s: native parser produced no records; the comparison proves nothing", name)
			}
			if d := cmp.Diff(want.Records, got.Records); d != "" {
				t.Errorf("%s batch %d: records differ (-native +%s):\n%s", name, batch, label, d)
			}
			if d := cmp.Diff(want.Final, got.Final, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s batch %d: final differs (-native +%s):\n%s", name, batch, label, d)
			}
		}
	}
}
