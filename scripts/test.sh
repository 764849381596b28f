#!/usr/bin/env bash
# make test: vet, the race-enabled test suite with invariant checks, then a
# short fuzz of every fuzz target. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
go test -race -tags invariants -count=1 ./...
FUZZTIME="${FUZZTIME:-3s}" scripts/fuzz.sh
