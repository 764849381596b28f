package tokenizer

import (
	"encoding/json"
	"testing"
)

// FuzzAutoTokenizer feeds arbitrary tokenizer_config.json auto_map values
// to the reader that names a remote-code tokenizer: a name or "", never a
// panic, and a plain string comes back as it is.
func FuzzAutoTokenizer(f *testing.F) {
	for _, s := range []string{`{"AutoTokenizer":"x.Y"}`, `{"AutoTokenizer":["a.B",null]}`, `{"AutoTokenizer":[1]}`, `null`, `[]`, `{"AutoConfig":"c"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := autoTokenizer(json.RawMessage(raw))
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			if got != "" {
				t.Fatalf("%q from a non-object", got)
			}
			return
		}
		var s string
		if v, ok := m["AutoTokenizer"]; ok && json.Unmarshal(v, &s) == nil && got != s {
			t.Fatalf("auto_map.AutoTokenizer %q read as %q", s, got)
		}
	})
}
