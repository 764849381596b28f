package sweep

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzLoadManifest reads arbitrary manifest.json bytes as ReadLoadSeries
// does: it never panics, and a load it finds is one of the sweep's
// settings with the manifest's value for it.
func FuzzLoadManifest(f *testing.F) {
	f.Add([]byte(`{"mode":"concurrency","replay":{"concurrency":10,"request_rate":0,"speedup":1}}`))
	f.Add([]byte(`{"mode":"rate","replay":{"request_rate":2.5},"goodput":"ttft:500","min_good_fraction":0.9}`))
	f.Add([]byte(`{"mode":"fixed","replay":{"speedup":4}}`))
	f.Add([]byte(`{"mode":"user-centric"}`))
	f.Add([]byte(`{"mode":7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var l runLoad
		if json.Unmarshal(data, &l) != nil {
			return
		}
		name, v, ok := l.setting()
		if !ok {
			return
		}
		if !slices.Contains(Settings, name) {
			t.Fatalf("setting %q is not a sweep setting", name)
		}
		want := map[string]float64{Concurrency: l.Replay.Concurrency, RequestRate: l.Replay.RequestRate, Speedup: l.Replay.Speedup}[name]
		if v != want { // JSON has no NaN
			t.Fatalf("setting %s = %v, manifest says %v", name, v, want)
		}
	})
}
