#!/usr/bin/env bash
# make bench: every benchmark, 5 counts, in benchstat-readable form.
# BENCH selects benchmarks (default all), PKG the packages (default ./...).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run='^$' -bench="${BENCH:-.}" -benchmem -count="${COUNT:-5}" ${PKG:-./...}
