#!/usr/bin/env bash
# Fuzzes every FuzzXxx target in the module for $FUZZTIME each (default
# 60s) and reports each target's executions, then a table of them all.
#
# $FUZZMINIMIZETIME (default 100x) bounds the minimization of each new
# input: Go's default, 60s, lets a target whose mutations keep finding new
# coverage spend its whole -fuzztime minimizing (FuzzMooncake ran 8
# executions in 3 s), so nothing is fuzzed. 100 executions still shrink an
# input, and a crasher is written either way.
#
# FUZZFRESH=1 (make test's short run) starts every target from its seed
# corpus alone, in an empty cache directory, instead of Go's fuzz cache
# ($GOCACHE/fuzz): on a machine that has fuzzed before, re-running the
# hundreds of inputs cached there takes longer than a 3-second budget, and
# such a target was never fuzzed at all (0 executions). The cache holds
# inputs that added coverage, not failures (those go to testdata/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-60s}"
minimize="${FUZZMINIMIZETIME:-100x}"
cacheargs=()
if [ -n "${FUZZFRESH:-}" ]; then
  cache=$(mktemp -d)
  trap 'rm -rf "$cache"' EXIT
  cacheargs=(-args -test.fuzzcachedir="$cache")
fi
report=()
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $target ($fuzztime, minimize $minimize)"
    if ! out=$(go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize" "$pkg" "${cacheargs[@]}" 2>&1); then
      # Go 1.26's fuzz coordinator can fail a target with a bare "context
      # deadline exceeded" as -fuzztime expires (golang/go#75804, fixed in
      # Go 1.27): nothing was found and no input was written. Any real
      # finding prints "Failing input written to"; only that, or any other
      # failure, fails the run.
      if ! { grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written to' <<<"$out"; }; then
        echo "$out"
        echo "FAIL: fuzz $pkg $target (a new crasher is under $dir/testdata/fuzz/$target)"
        exit 1
      fi
      echo "  (fuzztime boundary race golang/go#75804, no input written: not a finding)"
    fi
    # go prints "fuzz: elapsed: 3s, execs: 17848 (5949/sec), new interesting:
    # 117 (total: 122)" every 3 s and at the end: the last line counts all.
    execs=$(sed -n 's/^fuzz: elapsed: .*, execs: \([0-9]*\) .*/\1/p' <<<"$out" | tail -n 1)
    found=$(sed -n 's/.*new interesting: \([0-9]*\) .*/\1/p' <<<"$out" | tail -n 1)
    execs="${execs:-0}"
    note=""
    if [ "$execs" -lt 1000 ]; then
      note="  (barely fuzzed: fewer than 1000 executions)"
    fi
    echo "  $execs executions, ${found:-0} new interesting inputs$note"
    report+=("$(printf '%-44s %-22s %10s%s' "${pkg#github.com/reprise-bench/reprise}" "$target" "$execs" "$note")")
  done
done
echo
echo "executions per target ($fuzztime each, minimize $minimize):"
printf '%s\n' "${report[@]}"
