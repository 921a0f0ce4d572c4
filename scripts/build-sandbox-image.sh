#!/usr/bin/env bash
# Builds the gymflow sandbox base image without a registry:
#   debootstrap --variant=minbase bookworm → chroot apt-get install the packages → user `agent` (uid 1000),
#   /work → `tar -C ROOTFS -c . | docker import - gymflow/sandbox:<recipe-hash>` (also tagged :latest).
#
# The tag is a hash of the recipe (this script, which holds the package list), so changing either builds a new
# image and an unchanged recipe is a no-op (the tagged image exists). Both tarballs (the bare debootstrap root
# and the finished root) are cached outside the clone in $GYMFLOW_CACHE/sandbox, so a rebuild after
# `docker rmi` is a `docker import` of a cached file (seconds).
#
# Users with a registry can build docker/sandbox.Dockerfile instead (same packages, same user and workdir).
#
# Environment:
#   GYMFLOW_CACHE           cache directory (default ~/.cache/gymflow)
#   GYMFLOW_SANDBOX_IMAGE   repository name (default gymflow/sandbox)
#   GYMFLOW_DEBIAN_MIRROR   Debian mirror (default http://deb.debian.org/debian)
#   FORCE=1                 rebuild even when the tagged image exists (cached tarballs are still used)
# Prints the image reference (repo:hash) as the last line of stdout.
set -euo pipefail

# ---- the recipe (hashed) ---------------------------------------------------------------------------------
SUITE=bookworm
PACKAGES=(python3 python-is-python3 python3-pytest git patch procps)
# bash, coreutils (timeout), grep, findutils, tar, sed come with --variant=minbase.
# ----------------------------------------------------------------------------------------------------------

SELF="${BASH_SOURCE[0]}"
# shellcheck source=lib/minbase.sh
. "$(dirname "$SELF")/lib/minbase.sh"
CACHE="${GYMFLOW_CACHE:-${HOME:-/tmp}/.cache/gymflow}/sandbox"
REPO="${GYMFLOW_SANDBOX_IMAGE:-gymflow/sandbox}"
MIRROR="${GYMFLOW_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
HASH="$( { cat "$SELF"; printf '%s\n' "$SUITE" "${PACKAGES[@]}"; } | sha256sum | cut -c1-12)"
TAG="$REPO:$HASH"

log() { echo "build-sandbox-image: $*" >&2; }

if [[ "${FORCE:-}" != 1 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  log "$TAG exists; nothing to do"
  docker tag "$TAG" "$REPO:latest"
  echo "$TAG"
  exit 0
fi

mkdir -p "$CACHE"
ROOT_TAR="$CACHE/rootfs-$HASH.tar"
started=$SECONDS

if [[ ! -s "$ROOT_TAR" ]]; then
  if [[ "$(id -u)" != 0 ]]; then
    log "building the root filesystem needs root (debootstrap, chroot); run as root or build docker/sandbox.Dockerfile"
    exit 1
  fi
  BASE_TAR="$(minbase_tar "$SUITE" "$MIRROR" "$CACHE" log)"
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/gymflow-rootfs.XXXXXX")"
  ROOTFS="$WORK/root"
  mkdir -p "$ROOTFS"
  cleanup() {
    umount "$ROOTFS/proc" 2>/dev/null || true
    rm -rf "$WORK"
  }
  trap cleanup EXIT

  log "debootstrap root $BASE_TAR"
  tar -C "$ROOTFS" -xf "$BASE_TAR"

  log "apt-get install ${PACKAGES[*]}"
  mount -t proc proc "$ROOTFS/proc" 2>/dev/null || true
  cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf" 2>/dev/null || true
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    bash -euc "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${PACKAGES[*]} >/dev/null"
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -euc '
    groupadd -g 1000 agent
    useradd -u 1000 -g 1000 -m -d /home/agent -s /bin/bash agent
    mkdir -p /work && chown agent:agent /work
    # Commits inside the sandbox need an identity; the work dir belongs to agent but git checks ownership.
    git config --system user.name "gymflow agent"
    git config --system user.email "agent@gymflow.invalid"
    git config --system safe.directory "*"
    git config --system init.defaultBranch main
    apt-get clean
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/*.log /var/log/apt/* /tmp/* /root/.cache
  '
  umount "$ROOTFS/proc" 2>/dev/null || true
  : >"$ROOTFS/etc/resolv.conf"
  tar --numeric-owner -C "$ROOTFS" -cf "$ROOT_TAR.tmp" . && mv "$ROOT_TAR.tmp" "$ROOT_TAR"
  log "root filesystem cached at $ROOT_TAR ($((SECONDS - started))s)"
else
  log "using cached root filesystem $ROOT_TAR"
fi

log "docker import → $TAG"
docker import \
  --change 'USER agent' \
  --change 'WORKDIR /work' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["sleep","infinity"]' \
  --change "LABEL gymflow.sandbox.recipe=$HASH" \
  "$ROOT_TAR" "$TAG" >/dev/null
docker tag "$TAG" "$REPO:latest"
log "built $TAG in $((SECONDS - started))s"
echo "$TAG"
