#!/bin/sh
# rustc-wasm.sh: build a reprise adapter (a WebAssembly reactor module) from
# a Rust crate root with whichever rustc can:
#
#   sh rustc-wasm.sh OUT.wasm SRC.rs    build OUT.wasm
#   sh rustc-wasm.sh --print            print the chosen rustc, its version and target
#
# The rustc is $RUSTC when set, else the first rustc on PATH whose standard
# library for a WASI target is installed (rustup's usually comes before
# Debian's /usr/bin/rustc). The target is wasm32-wasip1 when that rustc knows
# it (Rust 1.78 and later; the old name wasm32-wasi was removed in 1.84),
# else wasm32-wasi (Debian bookworm's rustc 1.63 with libstd-rust-dev-wasm32).
# When no rustc qualifies, it says for each one what is missing and how to
# install it, and exits 3.
#
# Only shell builtins are used, so the script behaves the same wherever sh is.
set -eu

usage() {
	echo "usage: sh rustc-wasm.sh OUT.wasm SRC.rs | --print" >&2
	exit 2
}

# inspect RUSTC: sets target (empty when no WASI std is installed) and
# appends what is missing to $why.
inspect() {
	rc=$1
	target=
	version=$("$rc" --version 2>/dev/null) || {
		why="$why
  $rc: does not run"
		return
	}
	sysroot=$("$rc" --print sysroot 2>/dev/null) || sysroot=
	known=
	for t in $("$rc" --print target-list 2>/dev/null); do
		case $t in
		wasm32-wasip1) known="wasm32-wasip1${known:+ $known}" ;;
		wasm32-wasi) known="${known:+$known }wasm32-wasi" ;;
		esac
	done
	if [ -z "$known" ]; then
		why="$why
  $rc ($version): knows no WASI target (wasm32-wasip1 or wasm32-wasi)"
		return
	fi
	for t in $known; do
		if [ -d "$sysroot/lib/rustlib/$t/lib" ]; then
			target=$t
			return
		fi
	done
	t=${known%% *}
	case $sysroot in
	*/.rustup/*) fix="rustup target add $t" ;;
	/usr | /usr/*) fix="apt-get install libstd-rust-dev-wasm32 (Debian)" ;;
	*) fix="install the $t standard library for this toolchain" ;;
	esac
	why="$why
  $rc ($version): the $t standard library is not installed ($sysroot/lib/rustlib/$t); $fix"
}

choose() {
	why=
	if [ -n "${RUSTC:-}" ]; then
		inspect "$RUSTC"
		[ -n "$target" ] && return
	else
		seen=:
		IFS_SAVE=$IFS
		IFS=:
		for d in $PATH; do
			IFS=$IFS_SAVE
			rc=${d:-.}/rustc
			case $seen in *":$rc:"*) continue ;; esac
			seen="$seen$rc:"
			[ -f "$rc" ] && [ -x "$rc" ] || continue
			inspect "$rc"
			[ -n "$target" ] && return
			IFS=:
		done
		IFS=$IFS_SAVE
	fi
	[ -n "$why" ] || why="
  no rustc on PATH and RUSTC is not set"
	echo "rustc-wasm.sh: no Rust toolchain can build a WASI module:$why" >&2
	exit 3
}

case ${1:-} in
--print)
	[ $# -eq 1 ] || usage
	choose
	echo "$rc	$version	$target"
	;;
-* | "") usage ;;
*)
	[ $# -eq 2 ] || usage
	choose
	# -Z wasi-exec-model=reactor makes a reactor (no _start); it needs
	# RUSTC_BOOTSTRAP on a stable rustc. A cdylib would be a reactor too, but
	# wraps every export in constructor calls.
	RUSTC_BOOTSTRAP=1 "$rc" -Z wasi-exec-model=reactor --edition 2021 --target "$target" \
		--crate-type bin -C opt-level=3 -C strip=symbols -o "$1" "$2"
	;;
esac
