// Package sdkwasm holds reprise's adapter SDKs (ABI v1) as files: the
// one copy of each SDK source and template, which `reprise adapters new`
// (package wasm/scaffold) writes into a new adapter project. The SDKs
// themselves are the directories beside this file (go, c, rust,
// assemblyscript; see README.md); this package only embeds them.
package sdkwasm

import "embed"

// Files are the SDK files a new adapter project is made of, under their
// paths in this directory.
//
//go:embed go/adapter/adapter.go go/adapter/exports.go go/adapter/json.go go/adapter/scan.go go/template/main.go
//go:embed c/reprise_adapter.h c/template/adapter.c
//go:embed rust/reprise_adapter.rs rust/rustc-wasm.sh rust/template/src/main.rs
//go:embed assemblyscript/assembly/reprise.ts assemblyscript/template/adapter.ts
//go:embed sample.http
var Files embed.FS
