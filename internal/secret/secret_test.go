package secret

import (
	"encoding/json"
	"testing"
)

// TestURL: user info, query and fragment never come out.
func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://alice:s3cret@host:8000/v1": "http://host:8000/v1",
		"http://host/x?key=k#f":            "http://host/x",
		"http://host:8000":                 "http://host:8000",
		"http://[::1":                      Redacted,
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzBody: whatever a request body holds, Body's result, when JSON, has
// no secret-looking key whose value is not redacted, at any depth; a body
// that is not JSON comes back as it was.
func FuzzBody(f *testing.F) {
	for _, s := range []string{`{"api_key":"sk-1","model":"m"}`, `{"a":[{"hf_token":"x","max_tokens":3}]}`, `[{"Authorization":1}]`, `not json`, `{"x":1e999}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out := Body(body)
		var v any
		if json.Unmarshal(out, &v) != nil {
			return
		}
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if Key(k) && x != Redacted {
						t.Fatalf("%s: key %q kept %v in %s", body, k, x, out)
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(v)
	})
}
