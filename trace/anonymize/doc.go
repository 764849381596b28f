// Package anonymize rewrites a trace so that it can be shared: prefix-block
// hash ids are re-mapped with a keyed function, session ids become keyed
// pseudonyms, request text is dropped, and timestamps may be jittered.
//
// The mapping is HMAC-SHA256 under a 32-byte key: equal ids map to equal
// ids (so every prefix-sharing statistic of analyze-trace is unchanged),
// two traces anonymized with one key stay comparable, and without the key
// the original ids cannot be recovered or tested by a dictionary. A fresh
// random key ([NewKey]) makes the output unlinkable to any other trace.
// What is kept and what an attacker could still infer is stated in
// docs/format/traces.md, "Anonymizing".
package anonymize
