#!/usr/bin/env bash
# Checks the tools make test needs before it starts, installs the missing
# ones when it can, and says what to install when it cannot:
#
#   - Go at least go.mod's version and a C compiler with cgo (the race
#     detector needs cgo);
#   - Node.js 20+ with npm (arrowio's tests read the written files back with
#     real DuckDB, @duckdb/node-api, which npm installs into
#     arrowio/testdata/duckdb on the first run);
#   - Chromium (internal/report's browser test loads reports in it headless;
#     $REPRISE_CHROMIUM names another binary);
#   - Prometheus (cmd/reprise's TestPrometheusScrapesReplay starts Debian's
#     prometheus binary, with its own config and storage, to scrape a
#     replay's --metrics-addr; $REPRISE_PROMETHEUS names another binary);
#   - ffmpeg (trace/media's tests make synthetic MP3 audio and MP4/WebM
#     video with it, as --audio-format mp3 and --video-* do; design 0022);
#   - tmux (cmd/reprise's dashboard tests run the CLI in a tmux pane and
#     read the screen with capture-pane);
#   - the guest toolchains with which wasm's tests rebuild every shipped
#     adapter and template from source (TestWasmDrift, TestTemplates,
#     TestRustBuild): clang, lld, wasi-libc and the wasm32 compiler-rt
#     builtins (C), binaryen's wasm-opt, wabt's wat2wasm, rustc with Debian's
#     WASI standard library (Rust), and asc (AssemblyScript, npm ci).
#
# As root on Debian or Ubuntu the missing Debian packages are installed with
# apt-get (--no-install-recommends), waiting up to $APT_LOCK_WAIT seconds
# (default 300) for another apt or dpkg to let go of its lock; apt's own
# error is shown when it fails. Without the guest toolchains the rebuild
# tests skip, loudly; under CI (CI set) make test refuses to start instead,
# so that CI never passes without them.
#
#   scripts/need-tools.sh                  check (and install as root)
#   scripts/need-tools.sh --guest-packages print the Debian packages the guest
#                                          toolchains need, one a line
#   scripts/need-tools.sh --missing-guests print what is missing of them now
#                                          (a package or "asc (...)" a line;
#                                          nothing when all are there)
set -uo pipefail
cd "$(dirname "$0")/.."

# The Debian packages of the guest toolchains: wasm/toolchain_test.go's
# TestNeedToolsListsGuestPackages checks that this list holds every package
# its rebuild tests need.
guest_packages=(clang lld wasi-libc libclang-rt-dev-wasm32 binaryen wabt rustc libstd-rust-dev-wasm32)

probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT

# c_missing prints every package that keeps clang from building a WASI
# reactor module: clang, lld (wasm-ld), wasi-libc (the sysroot's headers
# and libc) and libclang-rt-dev-wasm32 (libclang_rt.builtins-wasm32.a).
# Without clang the last two cannot be probed by a build; dpkg says
# whether they are installed.
c_missing() {
  command -v wasm-ld >/dev/null || echo lld
  if ! command -v clang >/dev/null; then
    echo clang
    for p in wasi-libc libclang-rt-dev-wasm32; do
      dpkg -s "$p" >/dev/null 2>&1 || echo "$p"
    done
    return
  fi
  printf '#include <stdint.h>\n#include <string.h>\nint probe(void) { return (int)strlen("x") + (int)sizeof(uint64_t); }\n' >"$probe_dir/probe.c"
  if ! clang --target=wasm32-wasi -fsyntax-only "$probe_dir/probe.c" >/dev/null 2>&1; then
    echo wasi-libc
    dpkg -s libclang-rt-dev-wasm32 >/dev/null 2>&1 || echo libclang-rt-dev-wasm32
    return
  fi
  if ! clang --target=wasm32-wasi -mexec-model=reactor -O2 -o "$probe_dir/probe.wasm" "$probe_dir/probe.c" >/dev/null 2>&1; then
    echo libclang-rt-dev-wasm32
  fi
}
have_rust_wasm() { sh sdk-wasm/rust/rustc-wasm.sh --print >/dev/null 2>&1; }
asc=sdk-wasm/assemblyscript/node_modules/.bin/asc
missing_guests() {
  c_missing
  command -v wasm-opt >/dev/null || echo binaryen
  command -v wat2wasm >/dev/null || echo wabt
  # Debian's WASI std goes with Debian's rustc (a rustup rustc on PATH
  # without the target does not use it).
  have_rust_wasm || { echo rustc; echo libstd-rust-dev-wasm32; }
}

case "${1:-}" in
--guest-packages) printf '%s\n' "${guest_packages[@]}"; exit 0 ;;
--missing-guests)
  missing_guests
  [ -x "$asc" ] || echo "asc (npm ci in sdk-wasm/assemblyscript)"
  exit 0 ;;
"") ;;
*) echo "usage: scripts/need-tools.sh [--guest-packages | --missing-guests]" >&2; exit 2 ;;
esac

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

have_chromium() {
  [ -n "${REPRISE_CHROMIUM:-}" ] && [ -x "$REPRISE_CHROMIUM" ] && return 0
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null
}
have_prometheus() {
  [ -n "${REPRISE_PROMETHEUS:-}" ] && [ -x "$REPRISE_PROMETHEUS" ] && return 0
  command -v prometheus >/dev/null
}
apt_missing() {
  have_chromium || echo chromium
  have_prometheus || echo prometheus
  command -v tmux >/dev/null || echo tmux
  command -v ffmpeg >/dev/null || echo ffmpeg
  missing_guests
}

# apt_get runs apt-get with its output kept, waiting for the dpkg lock; on
# failure it shows apt's last lines and returns non-zero.
apt_log="$probe_dir/apt.log"
apt_get() {
  DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout="${APT_LOCK_WAIT:-300}" "$@" >"$apt_log" 2>&1 && return 0
  echo "make test: apt-get $*: failed:" >&2
  tail -n 15 "$apt_log" | sed 's/^/  apt: /' >&2
  return 1
}

mapfile -t pkgs < <(apt_missing | sort -u)
if [ "${#pkgs[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "make test: installing ${pkgs[*]} (apt-get install --no-install-recommends)" >&2
    # A fresh machine's package lists may be empty or stale: update once
    # when the first try fails.
    apt_get install -y --no-install-recommends "${pkgs[@]}" 2>/dev/null ||
      { apt_get update && apt_get install -y --no-install-recommends "${pkgs[@]}"; }
  else
    echo "make test: missing Debian packages: ${pkgs[*]} (not root, or no apt-get: install them yourself)" >&2
  fi
fi
if ! have_chromium; then
  need "chromium not found: install it (Debian/Ubuntu: apt-get install --no-install-recommends chromium) or set REPRISE_CHROMIUM to a Chromium or Chrome binary; internal/report's browser test needs it"
fi
if ! have_prometheus; then
  need "prometheus not found: install it (Debian/Ubuntu: apt-get install --no-install-recommends prometheus) or set REPRISE_PROMETHEUS to a Prometheus binary; cmd/reprise's live-metrics test needs it"
fi
if ! command -v tmux >/dev/null; then
  need "tmux not found: install it (Debian/Ubuntu: apt-get install --no-install-recommends tmux); cmd/reprise's dashboard tests need it"
fi
if ! command -v ffmpeg >/dev/null; then
  need "ffmpeg not found: install it (Debian/Ubuntu: apt-get install --no-install-recommends ffmpeg); trace/media's MP3 and video tests need it"
fi
if [ ! -x "$asc" ] && command -v npm >/dev/null; then
  if ! out=$(cd sdk-wasm/assemblyscript && npm ci --no-audit --no-fund 2>&1); then
    echo "make test: npm ci in sdk-wasm/assemblyscript failed:" >&2
    tail -n 10 <<<"$out" | sed 's/^/  npm: /' >&2
  fi
fi
guests=$(missing_guests | sort -u | tr '\n' ' ')
[ -x "$asc" ] || guests+="asc (npm ci in sdk-wasm/assemblyscript) "
if [ -n "${guests// /}" ]; then
  msg="guest toolchains missing: ${guests}(Debian/Ubuntu: apt-get install --no-install-recommends ${guest_packages[*]}; see sdk-wasm/README.md)"
  if [ -n "${CI:-}" ]; then
    need "$msg"
  else
    echo "make test: $msg; wasm's rebuild tests will skip" >&2
  fi
fi
exit "$missing"
