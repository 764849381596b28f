package secret

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret value.
const Redacted = "<redacted>"

// Key reports whether a JSON object key names a secret: compared without
// case, '-' and '_', it holds apikey, secret, password, passwd,
// authorization, credential, cookie, privatekey or accesskey, ends in
// token (access_token, hf_token; not max_tokens), or is key, auth, pass,
// pwd or bearer.
func Key(k string) bool {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(k))
	for _, s := range []string{"apikey", "secret", "password", "passwd", "authorization", "credential", "cookie", "privatekey", "accesskey"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	switch n {
	case "key", "auth", "pass", "pwd", "bearer":
		return true
	}
	return strings.HasSuffix(n, "token")
}

// JSON replaces, in place, the value of every secret-looking key (Key) at
// any depth of a decoded JSON value, and returns v.
func JSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if Key(k) {
				v[k] = Redacted
			} else {
				v[k] = JSON(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = JSON(x)
		}
	}
	return v
}

// Body is a JSON request body with the value of every secret-looking key
// replaced (numbers keep their text, keys come out sorted); a body that is
// not JSON is returned as it is (a copy).
func Body(body []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return slices.Clone(body)
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(JSON(v)) != nil {
		return slices.Clone(body)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// URL is a URL as files and logs name it: scheme, host and path; user
// info, query and fragment are left out (they may hold credentials). A
// URL that does not parse is replaced whole.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	if u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		return raw
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}
