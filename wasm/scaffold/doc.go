// Package scaffold writes a new endpoint-adapter project from the SDK
// templates (reprise adapters new): the template adapter, the SDK files it
// needs, a Makefile and a sample recorded stream, for Go, C, Rust or
// AssemblyScript. The embedded files are copies of the files under
// sdk-wasm/ (see sync.txt), refreshed by `make wasm` and checked by
// TestFilesInSync.
package scaffold
