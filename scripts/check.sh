#!/usr/bin/env bash
# make check: the gate before every change: formatting, go.mod drift, then make test.
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted:"; echo "$unformatted"; exit 1; fi
go mod tidy
git diff --exit-code go.mod go.sum || { echo "go.mod/go.sum drift: commit the result of go mod tidy"; exit 1; }
go generate ./cmd/reprise
git diff --exit-code docs/completion || { echo "completion scripts drift: commit the result of go generate ./cmd/reprise"; exit 1; }
# staticcheck, pinned (never @latest); it runs from the module proxy.
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
scripts/test.sh
