#!/usr/bin/env bash
# Builds the WebAssembly modules from their C sources (clang and lld with the wasm32 target; on Debian:
# `apt-get install clang lld`). The .wasm files are committed, so running gymflow needs no compiler;
# tests/wasm-build.test.ts rebuilds them and checks that the committed ones match their sources.
#
#   bash scripts/build-wasm.sh [OUT_DIR]    # default: next to each source
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:-}
for src in src/reward/rules/wasm/tokens.c; do
  out=${out_dir:+$out_dir/}$(basename "${src%.c}").wasm
  [ -n "$out_dir" ] || out="${src%.c}.wasm"
  # -O3 and SIMD; no libc (the module only touches its own linear memory); exports are the non-static
  # functions. -fno-builtin: the copy loop stays a loop (no memcpy to link).
  clang --target=wasm32 -O3 -msimd128 -nostdlib -fno-builtin -ffreestanding -Wall -Wextra -Werror \
    -Wl,--no-entry -Wl,--strip-all -Wl,--initial-memory=131072 \
    -o "$out" "$src"
  echo "built $out ($(wc -c < "$out") bytes)"
done
