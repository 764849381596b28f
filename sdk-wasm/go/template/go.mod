module example.com/my-adapter

go 1.26.8

require github.com/reprise-bench/reprise/sdk-wasm/go v0.0.0

replace github.com/reprise-bench/reprise/sdk-wasm/go => ../
