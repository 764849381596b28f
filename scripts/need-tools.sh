#!/usr/bin/env bash
# Checks the tools make test needs before it starts, and says what to
# install when one is missing: Go at least go.mod's version, a C compiler
# (the race detector needs cgo), and Node.js 20+ with npm (arrowio's tests
# read the written files back with real DuckDB, @duckdb/node-api, which
# npm installs into arrowio/testdata/duckdb on the first run), and Chromium
# (internal/report's browser test loads reports in it headless; installed
# with apt-get when missing and this runs as root on Debian or Ubuntu).
set -uo pipefail
cd "$(dirname "$0")/.."
missing=0
need() { echo "make test: $1" >&2; missing=1; }

want_go=$(awk '$1 == "go" { print $2; exit }' go.mod)
if ! command -v go >/dev/null; then
  need "go not found: install Go $want_go or newer (https://go.dev/dl/)"
else
  have_go=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  if [ "$(printf '%s\n%s\n' "$want_go" "$have_go" | sort -V | head -1)" != "$want_go" ]; then
    need "Go $have_go is older than go.mod's go $want_go: install Go $want_go or newer (https://go.dev/dl/)"
  fi
  cc=$(go env CC 2>/dev/null)
  if ! command -v "${cc:-gcc}" >/dev/null; then
    need "no C compiler (${cc:-gcc}): the race detector needs cgo; install gcc or clang (Debian/Ubuntu: apt-get install gcc)"
  elif [ "$(go env CGO_ENABLED)" != 1 ]; then
    need "CGO_ENABLED=0: the race detector needs cgo; unset CGO_ENABLED or set it to 1"
  fi
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  need "node and npm not found: install Node.js 20 or newer with npm (https://nodejs.org/); the DuckDB checks of arrowio need them"
else
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 20 ]; then
    need "Node.js $(node --version) is too old: install Node.js 20 or newer (https://nodejs.org/)"
  fi
fi

# Chromium for internal/report's browser test ($REPRISE_CHROMIUM names
# another binary), and the guest toolchains with which wasm's tests
# rebuild every shipped adapter and template from source (TestWasmDrift,
# TestTemplates, TestRustBuild): clang and lld (C), binaryen's wasm-opt,
# wabt's wat2wasm, rustc with Debian's WASI standard library (Rust) and
# asc (AssemblyScript, npm). As root on Debian or Ubuntu the missing ones
# are installed. Without the guest toolchains those tests skip, loudly;
# under CI (CI set) make test refuses to start instead, so that CI never
# passes without them.
have_chromium() {
  [ -n "${REPRISE_CHROMIUM:-}" ] && [ -x "$REPRISE_CHROMIUM" ] && return 0
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null
}
have_rust_wasm() { sh sdk-wasm/rust/rustc-wasm.sh --print >/dev/null 2>&1; }
apt_missing() {
  have_chromium || echo chromium
  command -v clang >/dev/null || echo clang
  command -v wasm-ld >/dev/null || echo lld
  command -v wasm-opt >/dev/null || echo binaryen
  command -v wat2wasm >/dev/null || echo wabt
  have_rust_wasm || echo rustc libstd-rust-dev-wasm32
}
pkgs=$(apt_missing | tr '\n' ' ')
if [ -n "${pkgs// /}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "make test: installing $pkgs(apt-get install)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086 # one word a package
  apt-get install -y -q $pkgs >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $pkgs >/dev/null 2>&1; } || true
fi
if ! have_chromium; then
  need "chromium not found: install it (Debian/Ubuntu: apt-get install chromium) or set REPRISE_CHROMIUM to a Chromium or Chrome binary; internal/report's browser test needs it"
fi
asc=sdk-wasm/assemblyscript/node_modules/.bin/asc
if [ ! -x "$asc" ] && command -v npm >/dev/null; then
  (cd sdk-wasm/assemblyscript && npm ci --silent --no-audit --no-fund >/dev/null 2>&1) || true
fi
guests=$(apt_missing | grep -v chromium | tr '\n' ' ')
[ -x "$asc" ] || guests+="asc (npm ci in sdk-wasm/assemblyscript) "
if [ -n "${guests// /}" ]; then
  msg="guest toolchains missing: ${guests}(Debian/Ubuntu: apt-get install clang lld binaryen wabt rustc libstd-rust-dev-wasm32; see sdk-wasm/README.md)"
  if [ -n "${CI:-}" ]; then
    need "$msg"
  else
    echo "make test: $msg; wasm's rebuild tests will skip" >&2
  fi
fi
exit "$missing"
