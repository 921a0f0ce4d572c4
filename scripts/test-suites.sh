#!/usr/bin/env bash
# The two test suites of `npm test`, side by side: vitest (TypeScript, against the real Temporal dev server,
# Docker engine and trainer) and the trainer's pytest suite.
#
# Why side by side: vitest's suites spend much of their time waiting on the dev server, on timeouts and on
# subprocesses. Even two files at a time (vitest.config.ts; the slow ones first and the learning test last,
# tests/support/sequencer.ts) leave slack on the 2-core CI machine, so pytest, held to one thread, runs in it
# instead of after vitest. Measured from a clean clone (2026-11-28): one file at a time, the run took 27.5 min
# (vitest 24.3 min); two at a time in glob order 23.9 min, with both cores busy ~93% of the time; two at a time
# in the sequencer's order 22.7 min (vitest 19.3 min, pytest 9.7 min beside it).
#
# pytest's output goes to a file, printed after vitest's, so the two never interleave. The exit status is
# vitest's if it failed, else pytest's. GYMFLOW_TEST_SERIAL=1 runs the suites one after the other instead.
#
# Then, once both passed, the soak's CI version (tests/soak.test.ts, ~6 min) on its own: its SLO includes
# `pipeline_status` latency (p99 < 100 ms), which measures the machine as much as gymflow when other suites share
# its two cores (p99 160–600 ms beside other work, 66 ms alone; docs/operations.md §10).
#
#   bash scripts/test-suites.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PATH="$PWD/node_modules/.bin:$PATH" # vitest, when run without npm
vitest=(bash scripts/with-tmpdir.sh vitest run)
pytest=(bash scripts/with-tmpdir.sh npm run -s test:trainer)

soak() {
  echo
  echo "── the soak's CI version (alone: its latency SLO needs the machine to itself) ──"
  GYMFLOW_SOAK_TEST=1 "${vitest[@]}" tests/soak.test.ts
}

if [[ "${GYMFLOW_TEST_SERIAL:-}" == 1 ]]; then
  "${vitest[@]}" && "${pytest[@]}" && soak
  exit
fi

log="$(mktemp "${TMPDIR:-/tmp}/gymflow-pytest-XXXXXX.log")"
# pytest's torch gets one thread: two suites' OpenMP teams spinning on two cores slow each other down.
OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 setsid "${pytest[@]}" >"$log" 2>&1 &
pytest_pid=$!
setsid "${vitest[@]}" &
vitest_pid=$!
# Each suite has its own process group, so an interrupt stops it and everything it started (dev servers,
# trainers, torchrun's ranks). Both run in the background because `wait` returns on a trapped signal, while a
# foreground command would hold the trap back until it ended. SIGTERM, not SIGINT: background commands of a
# script ignore SIGINT.
stop() {
  kill -TERM -- "-$vitest_pid" "-$pytest_pid" 2>/dev/null
  wait
  rm -f "$log"
  exit "$1"
}
trap 'stop 130' INT
trap 'stop 143' TERM

wait "$vitest_pid"
vitest_status=$?

echo
echo "── trainer tests (pytest, run beside vitest; waiting for it to finish) ──"
wait "$pytest_pid"
pytest_status=$?
cat "$log"
rm -f "$log"

if ((vitest_status != 0)); then exit "$vitest_status"; fi
if ((pytest_status != 0)); then exit "$pytest_status"; fi
soak
