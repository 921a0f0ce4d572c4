#!/usr/bin/env bash
# Builds gymflow's WebAssembly modules from their C sources into build/wasm/ (gitignored): today one,
# src/reward/rules/wasm/tokens.c, the reward rules' token index. Needs clang and lld with the wasm32 target
# (Debian: apt-get install clang lld); scripts/setup.sh installs them when root and runs this script when a
# module is missing or older than its source. Without the module gymflow still works: the rules fall back
# to the JavaScript token index (same verdicts, slower) and say so.
#
#   bash scripts/build-wasm.sh [OUT_DIR]    # default build/wasm
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:-build/wasm}
mkdir -p "$out_dir"
for src in src/reward/rules/wasm/tokens.c; do
  out="$out_dir/$(basename "${src%.c}").wasm"
  # -O3 and SIMD; no libc (the module only touches its own linear memory); exports are named in the
  # source (export_name). -fno-builtin: the copy loop stays a loop (no memcpy to link).
  clang --target=wasm32 -O3 -msimd128 -nostdlib -fno-builtin -ffreestanding -Wall -Wextra -Werror \
    -Wl,--no-entry -Wl,--strip-all -Wl,--initial-memory=131072 \
    -o "$out.tmp" "$src"
  mv "$out.tmp" "$out"
  echo "built $out ($(wc -c < "$out") bytes)"
done
