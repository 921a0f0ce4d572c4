#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (the S3-compatible object store of the S3 store backend's tests and bench, and of
# `docker-compose.yml`'s object store when run without images; docs/store.md, "S3 backend") from the Go module
# proxy, once, into a cache outside the clone:
#
#   $GYMFLOW_CACHE/bin/weed-<version>    github.com/seaweedfs/seaweedfs/weed
#
# A binary already there is kept, so a second run costs nothing and only a fresh machine pays for the build
# (module download + compile; the cold time is in docs/store.md). SeaweedFS's go.mod has replace directives,
# which `go install pkg@version` refuses, so the module is downloaded (`go mod download`), copied out of the
# read-only module cache and built in place. It needs a newer Go than Debian's; GOTOOLCHAIN makes the go
# command fetch that toolchain from the same proxy. The compile runs under `nice` (builds share the machine
# with tests). Concurrent runs wait for each other (flock).
#
#   bash scripts/build-seaweedfs.sh           # build when missing, print the binary's path
#   bash scripts/build-seaweedfs.sh --check   # exit 0 when the binary is there, 1 otherwise
#   bash scripts/build-seaweedfs.sh --path    # print the binary's path (whether or not it is there)
#
# Environment: GYMFLOW_CACHE (default ~/.cache/gymflow), GYMFLOW_GO (default go), GOMODCACHE/GOCACHE as Go's.
set -euo pipefail

SEAWEEDFS_MODULE=github.com/seaweedfs/seaweedfs
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
GO_TOOLCHAIN=go1.27.3

CACHE="${GYMFLOW_CACHE:-${HOME:-/tmp}/.cache/gymflow}"
BIN="$CACHE/bin"
GO="${GYMFLOW_GO:-go}"
weed="$BIN/weed-$SEAWEEDFS_VERSION"

case "${1:-}" in
  --check) [[ -x "$weed" ]]; exit ;;
  --path) echo "$weed"; exit 0 ;;
  "") ;;
  *) echo "build-seaweedfs: unknown option '$1' (expected --check or --path)" >&2; exit 2 ;;
esac

if [[ -x "$weed" ]]; then
  echo "$weed"
  exit 0
fi
if ! command -v "$GO" >/dev/null 2>&1; then
  echo "build-seaweedfs: no Go toolchain ($GO not found; Debian: apt-get install golang-go)" >&2
  exit 2
fi

mkdir -p "$BIN"
exec 9>"$BIN/.build-seaweedfs.lock"
flock 9
if [[ -x "$weed" ]]; then # built by the run we waited for
  echo "$weed"
  exit 0
fi

started=$SECONDS
work="$(mktemp -d "$BIN/.build-weed.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOTOOLCHAIN="$GO_TOOLCHAIN" GOFLAGS=-buildvcs=false CGO_ENABLED=0
echo "build-seaweedfs: downloading $SEAWEEDFS_MODULE@$SEAWEEDFS_VERSION (GOTOOLCHAIN=$GO_TOOLCHAIN)" >&2
# Run from the work directory: no go.mod there, so the download is not tied to any module of the caller.
dir="$(cd "$work" && GOFLAGS=-mod=mod "$GO" mod download -json "$SEAWEEDFS_MODULE@$SEAWEEDFS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$dir" || ! -f "$dir/go.mod" ]]; then
  echo "build-seaweedfs: go mod download gave no module directory for $SEAWEEDFS_MODULE@$SEAWEEDFS_VERSION" >&2
  exit 1
fi
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
echo "build-seaweedfs: compiling weed (nice -n 19)" >&2
if ! (cd "$work/src" && nice -n 19 "$GO" build -trimpath -ldflags='-s -w' -o "$work/weed" ./weed) >&2; then
  echo "build-seaweedfs: building weed failed" >&2
  exit 1
fi
# An atomic rename: a killed build leaves no half-written binary under the cached name.
mv "$work/weed" "$weed"
echo "build-seaweedfs: $weed [$((SECONDS - started))s]" >&2
echo "$weed"
