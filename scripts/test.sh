#!/usr/bin/env bash
# make test: vet, the race-enabled test suite with invariant checks, then a
# short fuzz of every fuzz target. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/need-tools.sh
# go-nvml's headers mark old NVML calls deprecated; their warnings are noise.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
go vet ./...
# -timeout: a package's whole test binary, not one test (go's default of
# 10m is tight for cmd/reprise under -race on a 2-core machine).
go test -race -tags invariants -count=1 -timeout=25m ./...
# Without -race: the allocation budgets (sync.Pool drops items at random
# under the race detector, so those tests skip there) and the every-row
# prompt fidelity test (410M tokens; ~5x slower under -race).
go test -tags invariants -count=1 -timeout=25m -run 'Alloc|^TestFidelity' ./...
FUZZTIME="${FUZZTIME:-3s}" scripts/fuzz.sh
