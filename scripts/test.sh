#!/usr/bin/env bash
# make test: vet, the race-enabled test suite with invariant checks, the
# tests that only mean something without the race detector, then a short
# fuzz of every fuzz target. Every pass runs even when an earlier one
# failed; at the end it prints how many tests each pass ran, passed,
# failed and skipped, every skip with its reason, every failure, and one
# closing line ("tests: N passed, N failed, N skipped"). Exits non-zero on
# any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/need-tools.sh || exit 1
# go-nvml's headers mark old NVML calls deprecated; their warnings are noise.
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"

# gotestsum shows each package as it finishes and keeps the JSON events of
# a pass, which internal/testsummary counts at the end (pinned here; the
# module proxy serves it).
gotestsum=bin/gotestsum
gotestsum_version=v1.13.0
if ! "$gotestsum" --version 2>/dev/null | grep -q "$gotestsum_version"; then
  GOBIN="$PWD/bin" go install "gotest.tools/gotestsum@$gotestsum_version" || exit 1
fi
root=$PWD
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
failed=()
passes=()
# pass NAME DIR GO-TEST-ARGS...: one go test run, its events kept.
pass() {
  local name=$1 dir=$2
  shift 2
  echo "== $name: go test $*"
  passes+=("$name=$results/$name.json")
  (cd "$dir" && "$root/$gotestsum" --format pkgname-and-test-fails --format-hide-empty-pkg \
    --hide-summary=skipped --jsonfile "$results/$name.json" -- "$@") || failed+=("$name")
}

echo "== vet"
go vet ./... || failed+=(vet)
# The Go guests (the SDK's template, the shipped openai-chat) build for
# wasip1 only: vet them there.
GOOS=wasip1 GOARCH=wasm go vet ./sdk-wasm/... ./wasm/adapters/... || failed+=(vet-wasip1)
# -timeout: a package's whole test binary, not one test (go's default of
# 10m is tight for cmd/reprise under -race on a 2-core machine).
pass race . -race -tags invariants -count=1 -timeout=25m ./...
# Without -race: the allocation budgets (sync.Pool drops items at random
# under the race detector, so those tests skip there), the every-row
# prompt fidelity test (410M tokens; ~5x slower under -race), and the
# statistical and timing checks that the race detector's tenfold, uneven
# slowdown would make meaningless, so that under -race they check less or
# skip: compare's calibration, same-server and sequential-runs tests, fan-out's paired
# difference, and sweep's capacity search, saturation stop and
# across-run intervals.
norace='Alloc|^TestFidelity'
norace+='|^TestCalibration$|^TestSameServerNoDifference$|^TestFanOut$'
norace+='|^TestSaturationStopsAtFirstPointPastCapacity$|^TestFindMaxRateWithinFivePercentOfCapacity$|^TestRunsIntervalsContainConfiguredTTFT$'
norace+='|^TestSequentialRunsVerdicts$|^TestFindMaxRateDefensible$'
# The calibrations against the mock's latency curve (each skips under
# -race, whose slowdown moves the curve): the monotone and multi-tier
# searches' and adaptive scaling's answers within 10 % of the mock's
# settings, and each recipe's (or "cannot tell" when the mock's own log shows
# the machine starved it off its model).
norace+='|^TestMonotoneSearchAgainstTheMock$|^TestTiersAgainstTheMock$|^TestAdaptiveScaleAgainstTheMock$|^TestRecipesAgainstTheMock$'
# The doc-test runs every documented example (skipped under -race).
norace+='|^TestDoc$'
# The module's shape (long functions, circles between files; it builds
# export data, which -race would build twice).
norace+='|^TestShape$'
pass norace . -tags invariants -count=1 -timeout=25m -run "$norace" ./...
echo "== fuzz"
FUZZTIME="${FUZZTIME:-3s}" FUZZFRESH=1 scripts/fuzz.sh || failed+=(fuzz)

echo
echo "== summary"
[ "${#failed[@]}" -eq 0 ] || echo "make test: FAILED: ${failed[*]}"
go run ./internal/testsummary "${passes[@]}" || failed+=(summary)
[ "${#failed[@]}" -eq 0 ]
