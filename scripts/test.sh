#!/usr/bin/env bash
# make test: vet, the race-enabled test suite with invariant checks, then a
# short fuzz of every fuzz target. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/need-tools.sh
# go-nvml's headers mark old NVML calls deprecated; their warnings are noise.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
go vet ./...
# The Go guest SDK is a module of its own (Go adapters require it alone):
# its scanner's tests and fuzz targets run here too.
(cd sdk-wasm/go && go vet ./... && go test -race -count=1 ./...)
# -timeout: a package's whole test binary, not one test (go's default of
# 10m is tight for cmd/reprise under -race on a 2-core machine).
go test -race -tags invariants -count=1 -timeout=25m ./...
# Without -race: the allocation budgets (sync.Pool drops items at random
# under the race detector, so those tests skip there), the every-row
# prompt fidelity test (410M tokens; ~5x slower under -race), and the
# statistical and timing checks that the race detector's tenfold, uneven
# slowdown would make meaningless, so that under -race they check less or
# skip: compare's calibration and same-server tests, fan-out's paired
# difference, and sweep's capacity search, saturation stop and
# across-run intervals.
norace='Alloc|^TestFidelity'
norace+='|^TestCalibration$|^TestSameServerNoDifference$|^TestFanOut$'
norace+='|^TestSaturationStopsAtFirstPointPastCapacity$|^TestFindMaxRateWithinFivePercentOfCapacity$|^TestRunsIntervalsContainConfiguredTTFT$'
# The doc-test runs every documented example's replays (skipped under -race).
norace+='|^TestDoc$'
go test -tags invariants -count=1 -timeout=25m -run "$norace" ./...
FUZZTIME="${FUZZTIME:-3s}" FUZZFRESH=1 scripts/fuzz.sh
