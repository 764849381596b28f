#!/usr/bin/env bash
# make wasm: rebuild every committed .wasm from its sources (shipped adapters
# in wasm/adapters, hostile test guests in wasm/testdata/hostile, and the SDK
# templates as a compile check). With --check, build into a temporary
# directory and fail if any committed module differs (drift check).
#
# Toolchains (Debian bookworm + npm; see sdk-wasm/README.md):
#   Go 1.26 (GOOS=wasip1), clang 14 + wasi-libc + libclang-rt-dev-wasm32 + binaryen,
#   a rustc with a WASI standard library (sdk-wasm/rust/rustc-wasm.sh picks
#   one: wasm32-wasip1 on current rustc, wasm32-wasi on Debian's rustc 1.63
#   with libstd-rust-dev-wasm32), AssemblyScript 0.28.20 (npm ci in
#   sdk-wasm/assemblyscript), wabt (wat2wasm).
#
# The committed anthropic-messages.wasm is built with Debian bookworm's rustc
# 1.63 (rustPinned); --check compares it only when that rustc builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
check=0
[ "${1:-}" = "--check" ] && check=1

missing=()
command -v go >/dev/null || missing+=(go)
command -v clang >/dev/null || missing+=(clang)
# clang runs wasm-opt (binaryen) on optimized wasm builds when it is on PATH;
# the committed C module was built with it.
command -v wasm-opt >/dev/null || missing+=("wasm-opt (binaryen)")
rustc_wasm="$root/sdk-wasm/rust/rustc-wasm.sh"
rustPinned="rustc 1.63.0"
if rust=$(sh "$rustc_wasm" --print 2>/dev/null); then
  rustVersion=$(printf '%s\n' "$rust" | cut -f2)
else
  missing+=("a rustc with a WASI std (sh sdk-wasm/rust/rustc-wasm.sh --print says what to install)")
fi
command -v wat2wasm >/dev/null || missing+=(wat2wasm)
[ -x sdk-wasm/assemblyscript/node_modules/.bin/asc ] || missing+=("asc (cd sdk-wasm/assemblyscript && npm ci)")
if [ ${#missing[@]} -gt 0 ]; then
  echo "wasm.sh: SKIPPED: missing toolchains: ${missing[*]}" >&2
  exit 3
fi

out=wasm/adapters
hout=wasm/testdata/hostile
if [ $check = 1 ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/adapters" "$tmp/hostile" "$tmp/templates"
  out=$tmp/adapters
  hout=$tmp/hostile
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/templates"
fi
abs() { case "$1" in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
out=$(abs "$out"); hout=$(abs "$hout")

gobuild() { # dir output
  (cd "$1" && GOOS=wasip1 GOARCH=wasm GOFLAGS=-buildvcs=false go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o "$2" .)
}
cbuild() { # source output (built from the source's directory)
  (cd "$(dirname "$1")" && clang --target=wasm32-wasi -mexec-model=reactor -O2 -I "$root/sdk-wasm/c" -o "$2" "$(basename "$1")")
}
rsbuild() { # source output (built from the source's directory: rustc embeds the path)
  (cd "$(dirname "$1")" && sh "$rustc_wasm" "$2" "$(basename "$1")")
}
asbuild() { # source output
  (cd "$root/sdk-wasm/assemblyscript" && node_modules/.bin/asc "$1" -O3 --runtime stub --use abort= -o "$2")
}

# Shipped adapters.
gobuild wasm/adapters/openai-chat "$out/openai-chat.wasm"
cbuild wasm/adapters/tgi-generate/tgi-generate.c "$out/tgi-generate.wasm"
rsbuild wasm/adapters/anthropic-messages/main.rs "$out/anthropic-messages.wasm"
asbuild "$root/wasm/adapters/kserve-generate/kserve-generate.ts" "$out/kserve-generate.wasm"

# Hostile test guests.
for f in wasm/testdata/hostile/*.wat; do
  (cd wasm/testdata/hostile && wat2wasm "$(basename "$f")" -o "$hout/$(basename "${f%.wat}").wasm")
done

# SDK templates must compile (their output is not committed; the Go test
# TestTemplates also builds them through reprise adapters new).
[ $check = 1 ] || {
gobuild sdk-wasm/go/template "$tmp/templates/go.wasm"
cbuild sdk-wasm/c/template/adapter.c "$tmp/templates/c.wasm"
rsbuild sdk-wasm/rust/template/src/main.rs "$tmp/templates/rust.wasm"
asbuild "$root/sdk-wasm/assemblyscript/template/adapter.ts" "$tmp/templates/as.wasm"
}

if [ $check = 1 ]; then
  drift=0
  if [ "$rustVersion" != "$rustPinned" ]; then
    echo "wasm.sh: anthropic-messages.wasm not compared: built with $rustVersion, committed from $rustPinned" >&2
    rm "$out/anthropic-messages.wasm"
  fi
  for f in "$out"/*.wasm; do
    cmp -s "$f" "wasm/adapters/$(basename "$f")" || { echo "drift: wasm/adapters/$(basename "$f") differs from a rebuild of its sources" >&2; drift=1; }
  done
  for f in "$hout"/*.wasm; do
    cmp -s "$f" "wasm/testdata/hostile/$(basename "$f")" || { echo "drift: wasm/testdata/hostile/$(basename "$f") differs from a rebuild" >&2; drift=1; }
  done
  [ $drift = 0 ] || { echo "run 'make wasm' and commit the result" >&2; exit 1; }
  echo "wasm.sh: no drift"
fi
