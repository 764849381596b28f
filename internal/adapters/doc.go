// Package adapters is what `reprise adapters` does beyond its flags: list
// the endpoint adapters of this binary ([List]), describe one ([Inspect])
// and run one, native or Wasm, on recorded responses ([Test]). It sits
// above engine/adapter/native and wasm because it drives both kinds. The
// texts, errors and exit codes are the command's, pinned by the CLI's
// tests.
package adapters
