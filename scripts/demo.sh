#!/usr/bin/env bash
# make demo: the main job on a bundled example: analyze the bundled Mooncake
# sample, start the mock server on a free port, replay the sample against it
# at a speed-up, print the summary (files under runs/), and write the run's
# report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
trace=traces/mooncake-sample.jsonl
bin/reprise analyze-trace "$trace"
echo

log=$(mktemp)
# --nice 10: the server yields the CPU to the client it is measured by (README, RATIONALE)
bin/reprise mock-server --nice 10 --addr 127.0.0.1:0 --ttft 30ms --itl 10ms --prefill-per-token 2us --prefix-cache-tokens 50000000 2>"$log" &
mock=$!
trap 'kill "$mock" 2>/dev/null; rm -f "$log"' EXIT
url=""
for _ in $(seq 100); do
  url=$(grep -o 'url=http://[0-9.:]*' "$log" | head -1 | cut -d= -f2 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the mock server did not start:"; cat "$log"; exit 1; }
echo "mock server at $url"
out="runs/demo-$(date -u +%Y%m%dT%H%M%SZ)"
# A failed verdict (exit 3 or 4) still wrote a run worth looking at.
rc=0
bin/reprise replay "$trace" --url "$url" --model reprise-mock --speedup 10 --max-tokens-from-trace --out "$out" || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || [ "$rc" -eq 4 ] || exit "$rc"
echo
bin/reprise report -o "$out/report.html" "$out"
echo "open $(pwd)/$out/report.html in a browser"
exit "$rc"
