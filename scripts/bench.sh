#!/usr/bin/env bash
# make bench: the performance targets of docs/benchmarks.md ("Targets"),
# each benchmark in go test's output format (what benchstat reads), all
# written to bench.txt as well; then benchstat's table of them when
# benchstat is installed.
#
#   COUNT       runs of each light benchmark (default 5)
#   HEAVY_COUNT runs of each benchmark of seconds to minutes (default 1)
#   BENCH, PKG  run only this -bench pattern in these packages (e.g.
#               BENCH=BenchmarkTTFTError PKG=. COUNT=1), or BENCH=all for
#               every benchmark of the module
set -euo pipefail
cd "$(dirname "$0")/.."
count="${COUNT:-5}"
heavy="${HEAVY_COUNT:-1}"
out=bench.txt
: >"$out"

bench() { # PKG PATTERN COUNT [go test flags]
  local pkg=$1 pattern=$2 n=$3
  shift 3
  echo "# $pkg $pattern" >&2
  go test -run='^$' -bench="$pattern" -benchmem -count="$n" -timeout=60m "$@" "$pkg" | tee -a "$out"
}

if [ -n "${BENCH:-}" ]; then
  if [ "$BENCH" = all ]; then
    BENCH=.
  fi
  bench "${PKG:-./...}" "$BENCH" "$count"
else
  # 1. Open loop: client CPU per request, lateness by rate (non-streaming);
  #    streaming client CPU per event and TTFT error.
  bench . 'BenchmarkOpenLoopNonStreaming' "$heavy" -benchtime=1x
  bench . 'BenchmarkTTFTError' "$heavy" -benchtime=1x
  #    The dashboard's cost: lateness and client CPU per request at 2k req/s,
  #    --ui dashboard against the progress line (target: within 5 %).
  bench . 'BenchmarkDashboard' "$heavy" -benchtime=1x
  bench ./engine 'BenchmarkStreamRead' "$count"
  bench ./engine 'BenchmarkLoopbackFloor' "$heavy" -benchtime=1x
  #    The mock server's CPU per request and per event (what the load
  #    generator's server costs on the same machine).
  bench ./internal/mockserver 'BenchmarkNonStream|BenchmarkSSE' "$count"
  # 2. analyze-trace rows per CPU-second: the command as users run it on
  #    the 1M-row Mooncake file (and its peak RSS), then the loop and its parts.
  bench ./cmd/reprise 'BenchmarkAnalyzeTraceCLI' "$count" -benchtime=1x
  bench ./trace/analyze 'BenchmarkAnalyzeMooncake' "$count"
  bench ./trace 'BenchmarkMooncakeDecode$' "$count"
  # 3. Wasm guests: parse CPU per event against native, cached start,
  #    and the whole client's CPU per streamed event through each.
  bench ./wasm 'BenchmarkParse|BenchmarkStartCached' "$count"
  bench ./wasm 'BenchmarkEndToEnd' "$count" -benchtime=2000x
  bench ./engine/adapter/openai 'BenchmarkParseChunk' "$count"
  # 4. synthesize: rows/s, heap per row and its growth per row, streamed
  #    (generate; derive streamed and read whole).
  bench ./trace/synth 'BenchmarkGenerateTo|BenchmarkDeriveTo' "$count"
  # 4b. A request with a 1024x1024 synthetic PNG: the build copies the
  #     cached part; encoding it is what the cache saves.
  bench ./engine/adapter/openai 'BenchmarkBuildChat1024PNG|BenchmarkBuildChatRow1024PNG' "$count"
  bench ./trace/media 'BenchmarkBuildPart1024PNG' "$count"
  # 5. A 10M-request run: summarize's and report's CPU, wall time and peak
  #    heap at 10M requests (and the report's size, of a 100k-request run);
  #    merge's at 1M (two shards; the 10M command is in docs/benchmarks.md);
  #    the analyzer's memory at 10M rows.
  bench ./arrowio 'BenchmarkSummarize10M' "$heavy" -benchtime=1x
  bench ./internal/report 'BenchmarkBuild$' "$count"
  bench ./internal/report 'BenchmarkBuild10M' "$heavy" -benchtime=1x
  bench . 'BenchmarkMerge$' "$heavy" -benchtime=1x
  bench ./trace/analyze 'BenchmarkMemory10M' "$heavy" -benchtime=1x
fi

if command -v benchstat >/dev/null; then
  benchstat "$out"
else
  echo "bench.txt holds the results; 'go install golang.org/x/perf/cmd/benchstat@latest' prints them as a table" >&2
fi
