module github.com/reprise-bench/reprise/sdk-wasm/go

go 1.26.8
