#!/usr/bin/env bash
# make demo: the main job on a bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
bin/reprise analyze-trace traces/mooncake-sample.jsonl
