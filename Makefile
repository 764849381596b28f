# reprise — every target is one line; the logic lives in scripts/ and Go.
GO ?= go
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null)

.PHONY: build test check bench demo fuzz clean wasm

build: ; $(GO) build -trimpath -ldflags "-s -w -X github.com/reprise-bench/reprise.commit=$(COMMIT)" -o bin/reprise ./cmd/reprise
test: ; scripts/test.sh
check: ; scripts/check.sh
bench: ; scripts/bench.sh
demo: build ; scripts/demo.sh
fuzz: ; FUZZTIME=$${FUZZTIME:-60s} scripts/fuzz.sh
clean: ; rm -rf bin runs
wasm: ; scripts/wasm.sh
