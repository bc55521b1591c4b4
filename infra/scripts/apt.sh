#!/usr/bin/env bash
# apt.sh PACKAGE...: installs Debian packages the tests need (ffmpeg, chromium), idempotently: a package
# already installed is left alone, and apt-get update runs at most once per call, only when something
# is missing. make test calls it before the tests that use the packages.
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 PACKAGE..." >&2
  exit 2
fi

missing=()
for p in "$@"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "apt.sh: already installed: $*"
  exit 0
fi

if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt run (a parallel make job) instead of failing on its lock.
lock=(-o DPkg::Lock::Timeout=600)
echo "apt.sh: installing ${missing[*]} (apt-get update, then apt-get install -y)..."
$SUDO apt-get "${lock[@]}" update -qq
$SUDO apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "apt.sh: installed ${missing[*]}"
