// Package scaffold writes a new endpoint-adapter project from the SDK
// templates (reprise adapters new): the template adapter, the SDK files it
// needs, a Makefile and a sample recorded stream, for Go, C, Rust or
// AssemblyScript. The files are read from package sdk-wasm (sdkwasm),
// which embeds the SDK sources themselves: there is one copy of each.
package scaffold
