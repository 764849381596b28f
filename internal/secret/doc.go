// Package secret is the one rule of what reprise's files and logs may say
// of a secret: a URL's user info, query and fragment; the value of a
// secret-looking JSON key (api_key, token, password…) at any depth of a
// request body. The run directory (manifest.json, inputs.json) and
// `reprise record` (its log, --keep-text) apply it alike.
package secret
