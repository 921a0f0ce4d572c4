#!/usr/bin/env bash
# Builds the binaries of `gymflow cluster` (docs/operations.md, "Cluster on one machine") from the Go module
# proxy, once, into a cache outside the clone:
#
#   $GYMFLOW_CACHE/bin/temporal-server-<v>     go.temporal.io/server/cmd/server       (the real Temporal server)
#   $GYMFLOW_CACHE/bin/temporal-sql-tool-<v>   go.temporal.io/server/cmd/tools/sql    (its schema tool)
#   $GYMFLOW_CACHE/bin/temporal-ui-server-<u>  github.com/temporalio/ui-server/v2     (the Web UI, assets embedded)
#
# A binary already there is kept, so a second run costs nothing and only a fresh machine pays for the build
# (module download + compile: see docs/operations.md for the measured time). The modules need a newer Go than
# Debian's; GOTOOLCHAIN makes the go command fetch that toolchain from the same proxy. The compile runs under
# `nice` (builds share the machine with tests). Concurrent runs wait for each other (flock).
#
#   bash scripts/build-temporal-server.sh           # build what is missing, print the paths
#   bash scripts/build-temporal-server.sh --check   # exit 0 when every binary is there, 1 otherwise
#
# Environment: GYMFLOW_CACHE (default ~/.cache/gymflow), GYMFLOW_GO (default go), GOMODCACHE/GOCACHE as Go's.
set -euo pipefail

TEMPORAL_VERSION=1.32.2
UI_VERSION=2.58.1
# ui-server v2.58.1 requires go.temporal.io/api v1.64.0, whose source the module proxy no longer serves (403 "not
# available"); the UI builds in a scratch module that requires this later patch release instead.
UI_API_VERSION=1.64.3
GO_TOOLCHAIN=go1.27.3

CACHE="${GYMFLOW_CACHE:-${HOME:-/tmp}/.cache/gymflow}"
BIN="$CACHE/bin"
GO="${GYMFLOW_GO:-go}"

server="$BIN/temporal-server-$TEMPORAL_VERSION"
sqltool="$BIN/temporal-sql-tool-$TEMPORAL_VERSION"
ui="$BIN/temporal-ui-server-$UI_VERSION"

all_there() { [[ -x "$server" && -x "$sqltool" && -x "$ui" ]]; }

if [[ "${1:-}" == --check ]]; then
  all_there
  exit
fi

if ! command -v "$GO" >/dev/null 2>&1; then
  echo "build-temporal-server: no Go toolchain ($GO not found; Debian: apt-get install golang-go)" >&2
  exit 2
fi

# Go 1.21 or later: older ones know nothing of GOTOOLCHAIN and would try to build with themselves.
go_minor="$("$GO" env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
if [[ -z "$go_minor" || "$go_minor" -lt 21 ]]; then
  echo "build-temporal-server: $("$GO" version 2>&1) is older than go1.21 and cannot fetch $GO_TOOLCHAIN; install a newer Go (https://go.dev/dl/)" >&2
  exit 2
fi

mkdir -p "$BIN"
# GYMFLOW_BUILD_LOCK_HELD=1: the caller (setup.sh starting this in the background) holds the lock already, on a
# descriptor this process inherited, so that whoever waits for the build never finds the lock free too early.
if [[ "${GYMFLOW_BUILD_LOCK_HELD:-}" != 1 ]]; then
  exec 9>"$BIN/.build-temporal.lock"
  flock 9
fi

# go install PKG@VERSION into a fresh directory, then an atomic rename to NAME: a killed build leaves no
# half-written binary under the cached name.
install_one() { # name package@version binary-name-go-gives-it
  local dest="$BIN/$1" tmp started=$SECONDS
  [[ -x "$dest" ]] && return 0
  tmp="$(mktemp -d "$BIN/.build.XXXXXX")"
  echo "build-temporal-server: building $2 (GOTOOLCHAIN=$GO_TOOLCHAIN)"
  if ! GOTOOLCHAIN="$GO_TOOLCHAIN" GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
    nice -n 19 "$GO" install -trimpath -ldflags='-s -w' "$2"; then
    rm -rf "$tmp"
    echo "build-temporal-server: building $2 failed" >&2
    return 1
  fi
  mv "$tmp/$3" "$dest"
  rm -rf "$tmp"
  echo "build-temporal-server: $dest [$((SECONDS - started))s]"
}

# go build of PACKAGE@VERSION in a scratch module that also requires EXTRA (module@version), into NAME.
build_in_module() { # name package@version extra
  local dest="$BIN/$1" work started=$SECONDS
  [[ -x "$dest" ]] && return 0
  work="$(mktemp -d "$BIN/.build.XXXXXX")"
  echo "build-temporal-server: building $2 with $3 (GOTOOLCHAIN=$GO_TOOLCHAIN)"
  if ! (cd "$work" && export GOTOOLCHAIN="$GO_TOOLCHAIN" CGO_ENABLED=0 GOFLAGS=-buildvcs=false &&
    "$GO" mod init gymflow.local/build >/dev/null 2>&1 && "$GO" get "$2" "$3" &&
    nice -n 19 "$GO" build -trimpath -ldflags='-s -w' -o "$work/out" "${2%@*}"); then
    rm -rf "$work"
    echo "build-temporal-server: building $2 failed" >&2
    return 1
  fi
  mv "$work/out" "$dest"
  rm -rf "$work"
  echo "build-temporal-server: $dest [$((SECONDS - started))s]"
}

started=$SECONDS
install_one "temporal-server-$TEMPORAL_VERSION" "go.temporal.io/server/cmd/server@v$TEMPORAL_VERSION" server
install_one "temporal-sql-tool-$TEMPORAL_VERSION" "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_VERSION" sql
build_in_module "temporal-ui-server-$UI_VERSION" "github.com/temporalio/ui-server/v2/cmd/server@v$UI_VERSION" "go.temporal.io/api@v$UI_API_VERSION"
echo "build-temporal-server: ok [$((SECONDS - started))s]"
printf '%s\n' "$server" "$sqltool" "$ui"
