#!/usr/bin/env bash
# make test: vet, the race-enabled test suite with invariant checks, then a
# short fuzz of every fuzz target. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# go-nvml's headers mark old NVML calls deprecated; their warnings are noise.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
go vet ./...
go test -race -tags invariants -count=1 ./...
# The every-row prompt fidelity test counts 410M tokens; the race detector
# would make it ~5x slower, so it skips under -race and runs here instead.
go test -tags invariants -count=1 -run '^TestFidelity' ./internal/prompt
FUZZTIME="${FUZZTIME:-3s}" scripts/fuzz.sh
