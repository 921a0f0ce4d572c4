#!/usr/bin/env bash
# Runs a command with TMPDIR pointing at a fresh directory and removes that directory afterwards, whatever
# the command's outcome (its exit status is kept). The test suites make many scratch folders (stores,
# exports, tokenizers, dev-server databases); this way a run, or one interrupted half-way, leaves none of
# them in the system's temporary directory.
#
#   bash scripts/with-tmpdir.sh vitest run
set -uo pipefail
scratch="$(mktemp -d "${TMPDIR:-/tmp}/gymflow-test-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
TMPDIR="$scratch" "$@"
