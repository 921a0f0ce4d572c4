# Sourced by the image scripts that build without a registry (build-sandbox-image.sh, build-node-image.sh).
#
# minbase_tar SUITE MIRROR CACHE_DIR LOG_FN: prints the path of a tarball of `debootstrap --variant=minbase SUITE`,
# cached at CACHE_DIR/debootstrap-SUITE-minbase.tar (made on first use: needs root, and installs debootstrap with
# apt-get when it is missing).
minbase_tar() {
  local suite="$1" mirror="$2" cache="$3" log="$4"
  local tar="$cache/debootstrap-$suite-minbase.tar"
  if [[ -s "$tar" ]]; then
    echo "$tar"
    return 0
  fi
  if [[ "$(id -u)" != 0 ]]; then
    "$log" "debootstrap needs root; run as root or build the image from its Dockerfile (docker/)"
    return 1
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    "$log" "installing debootstrap (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  fi
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/gymflow-debootstrap.XXXXXX")"
  "$log" "debootstrap --variant=minbase $suite ($mirror)"
  if ! debootstrap --variant=minbase "$suite" "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -30 "$work/debootstrap.log" >&2
    rm -rf "$work"
    return 1
  fi
  mkdir -p "$cache"
  tar --numeric-owner -C "$work/root" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
  rm -rf "$work"
  echo "$tar"
}
