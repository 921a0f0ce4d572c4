#!/usr/bin/env bash
# Builds a Node.js base image without a registry, for docker/worker.Dockerfile's NODE_IMAGE where no registry
# serves node:20-bookworm-slim:
#   debootstrap --variant=minbase bookworm (cached, scripts/lib/minbase.sh) + this machine's node and npm
#   + this machine's trusted certificates → `docker import` → gymflow/node:<node version>-<recipe hash>.
#
# This machine's certificate bundle goes in as NODE_EXTRA_CA_CERTS, so npm inside the build trusts what the
# host trusts (a registry mirror or a proxy with a private CA). The node binary must run on Debian bookworm's
# libc, as Node's own Linux builds and Debian's and NodeSource's packages do.
#
# Environment:
#   GYMFLOW_CACHE          cache directory (default ~/.cache/gymflow)
#   GYMFLOW_NODE_IMAGE     repository name (default gymflow/node)
#   GYMFLOW_DEBIAN_MIRROR  Debian mirror (default http://deb.debian.org/debian)
#   GYMFLOW_CA_BUNDLE      the certificates to trust (default /etc/ssl/certs/ca-certificates.crt)
# Prints the image reference as the last line of stdout.
set -euo pipefail

SUITE=bookworm
SELF="${BASH_SOURCE[0]}"
# shellcheck source=lib/minbase.sh
. "$(dirname "$SELF")/lib/minbase.sh"
CACHE="${GYMFLOW_CACHE:-${HOME:-/tmp}/.cache/gymflow}/sandbox"
REPO="${GYMFLOW_NODE_IMAGE:-gymflow/node}"
MIRROR="${GYMFLOW_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CA="${GYMFLOW_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"

log() { echo "build-node-image: $*" >&2; }

NODE="$(command -v node)"
NODE="$(readlink -f "$NODE")"
NPM_DIR="$(npm root -g)/npm"
VERSION="$("$NODE" --version)"
[[ -f "$NPM_DIR/package.json" ]] || { log "npm's package directory not found at $NPM_DIR"; exit 1; }
[[ -s "$CA" ]] || { log "no certificate bundle at $CA (set GYMFLOW_CA_BUNDLE)"; exit 1; }
HASH="$( { cat "$SELF"; sha256sum "$NODE" "$CA" "$NPM_DIR/package.json"; } | sha256sum | cut -c1-12)"
TAG="$REPO:${VERSION#v}-$HASH"

if docker image inspect "$TAG" >/dev/null 2>&1; then
  log "$TAG exists; nothing to do"
  echo "$TAG"
  exit 0
fi

started=$SECONDS
BASE_TAR="$(minbase_tar "$SUITE" "$MIRROR" "$CACHE" log)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gymflow-node-image.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
ROOTFS="$WORK/root"
mkdir -p "$ROOTFS"
tar -C "$ROOTFS" -xf "$BASE_TAR"
install -D -m 0755 "$NODE" "$ROOTFS/usr/local/bin/node"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
install -D -m 0644 "$CA" "$ROOTFS/usr/local/share/gymflow/ca-certificates.crt"
rm -rf "$ROOTFS/var/lib/apt/lists/"* "$ROOTFS/var/cache/apt/"*.bin
: >"$ROOTFS/etc/resolv.conf"

log "docker import → $TAG (node $VERSION)"
tar --numeric-owner -C "$ROOTFS" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/gymflow/ca-certificates.crt' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["node"]' \
  --change "LABEL gymflow.node.recipe=$HASH" \
  - "$TAG" >/dev/null
log "built $TAG in $((SECONDS - started))s"
echo "$TAG"
