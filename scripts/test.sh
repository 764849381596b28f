#!/usr/bin/env bash
# make test: vet, the race-enabled test suite with invariant checks, then a
# short fuzz of every fuzz target. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/need-tools.sh
# go-nvml's headers mark old NVML calls deprecated; their warnings are noise.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
go vet ./...
go test -race -tags invariants -count=1 ./...
# Without -race: the allocation budgets (sync.Pool drops items at random
# under the race detector, so those tests skip there) and the every-row
# prompt fidelity test (410M tokens; ~5x slower under -race).
go test -tags invariants -count=1 -run 'Alloc|^TestFidelity' ./...
FUZZTIME="${FUZZTIME:-3s}" scripts/fuzz.sh
