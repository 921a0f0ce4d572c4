#!/usr/bin/env bash
# Builds dist/: `tsc -p tsconfig.build.json`, then the files the modules read beside themselves (profiles'
# JSON, the sandbox tasks), copied into the same places under dist/src. dist/ is rebuilt from nothing, so a
# moved or deleted source leaves no module behind; .build-stamp is written last and marks a complete build.
#
#   scripts/build.sh              build
#   scripts/build.sh --if-stale   build only when dist/ is missing or older than a source (setup)
#   scripts/build.sh --check      exit 1, naming the first newer source, when dist/ is missing or stale (tests)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAMP=dist/.build-stamp

# Prints the first input newer than the stamp (or the stamp itself when there is none): the rule and the list of
# inputs are bin/build-freshness.js's, which bin/gymflow.js also runs before every command.
stale() {
  node --input-type=module -e "import { staleBuildInput } from './bin/build-freshness.js'; console.log(staleBuildInput('.') ?? '')"
}

case "${1:-}" in
  --check)
    newer="$(stale)"
    if [[ -n "$newer" ]]; then
      if [[ "$newer" == "$STAMP" ]]; then
        echo "gymflow: no build in dist/: run \`npm run build\`" >&2
      else
        echo "gymflow: dist/ is older than $newer: run \`npm run build\`" >&2
      fi
      exit 1
    fi
    exit 0
    ;;
  --if-stale)
    [[ -z "$(stale)" ]] && exit 0
    ;;
  "") ;;
  *)
    echo "usage: scripts/build.sh [--if-stale | --check]" >&2
    exit 2
    ;;
esac

rm -rf dist
node_modules/.bin/tsc -p tsconfig.build.json
# Data read through paths relative to a module (import.meta.url): everything under src/ that is neither
# TypeScript nor documentation, fixtures aside.
(cd src && find . -type f ! -name '*.ts' ! -name '*.md' ! -path '*/__fixtures__/*' -exec cp --parents {} ../dist/src/ \;)
# The workflow bundle the built CPU worker loads (workers/cpu.ts), so that it does not run webpack at every start.
node scripts/bundle-workflows.mjs dist/workflows/index.js dist/workflows/bundle.js
# The rows `gymflow envs` prints for the built-in environments, computed from this build's environments.
node scripts/env-listing.mjs
touch "$STAMP"
