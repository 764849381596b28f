package reprise

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/reprise-bench/reprise/internal/secret"
)

// What the run directory and the logs may say about the command line:
// everything but its secrets. A secret is the user info of a URL, the
// value of a header not on allowedHeaders, the --api-key, and the value of
// a secret-looking key anywhere in --extra-body.

// redacted replaces a secret value.
const redacted = secret.Redacted

// allowedHeaders are the request headers whose values are written as given
// (canonical names, lower case). Every other header's value is a secret:
// gateways authorize with headers of any name (X-Auth, X-Goog-Api-Key…).
var allowedHeaders = map[string]bool{
	"accept":          true,
	"accept-encoding": true,
	"accept-language": true,
	"cache-control":   true,
	"content-type":    true,
	"user-agent":      true,
	"x-reprise-fault": true, // the mock server's fault injection
}

// headerForFiles is one --header NAME:VALUE as the manifest writes it: the
// value replaced unless the name is on allowedHeaders.
func headerForFiles(h string) string {
	k, v, _ := strings.Cut(h, ":")
	k = strings.TrimSpace(k)
	if allowedHeaders[strings.ToLower(k)] {
		return k + ": " + strings.TrimSpace(v)
	}
	return k + ": " + redacted
}

// urlForFiles is a URL as the run's files and logs name it: scheme, host
// and path; user info, query and fragment are left out (they may hold
// credentials). A URL that does not parse is replaced whole.
func urlForFiles(raw string) string {
	return secret.URL(raw)
}

// secretKey reports whether a JSON object key names a secret: compared
// without case, '-' and '_', it holds apikey, secret, password, passwd,
// authorization, credential, cookie, privatekey or accesskey, ends in
// token (access_token, hf_token; not max_tokens), or is key, auth, pass,
// pwd or bearer.
func secretKey(k string) bool {
	return secret.Key(k)
}

// extraBodyForFiles is the --extra-body JSON with the value of every
// secret-looking key (secretKey), at any depth, replaced; numbers keep
// their text. Keys come out sorted. Text that is not JSON is replaced whole.
func extraBodyForFiles(s string) string {
	if s == "" {
		return ""
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return redacted
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(redactJSON(v)); err != nil {
		return redacted
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func redactJSON(v any) any {
	return secret.JSON(v)
}

// redactor replaces the secret-bearing URLs it was given by their
// urlForFiles forms in text (scrape errors name their target). The zero
// value replaces nothing.
type redactor struct{ r *strings.Replacer }

func newRedactor(urls ...string) redactor {
	var pairs []string
	for _, raw := range urls {
		f := urlForFiles(raw)
		if f == raw {
			continue
		}
		pairs = append(pairs, raw, f)
		if u, err := url.Parse(raw); err == nil && u.User != nil {
			pairs = append(pairs, u.Redacted(), f) // as net/http's errors write it
		}
	}
	if len(pairs) == 0 {
		return redactor{}
	}
	return redactor{strings.NewReplacer(pairs...)}
}

func (r redactor) String(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
