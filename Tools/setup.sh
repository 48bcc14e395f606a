#!/usr/bin/env bash
# Installs what PermissionLedger needs from Debian when it is missing: LMDB's library and headers
# (liblmdb-dev) and pkg-config. Runs apt-get update first, through sudo when not root.
#
#   Tools/setup.sh [PACKAGE...]   also installs these Debian packages when missing (the benchmarks add libsqlite3-dev)
set -euo pipefail
missing=()
for package in liblmdb-dev "$@"; do
    # Installed, not merely known to dpkg (a removed package keeps its configuration files and a status).
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing+=("$package")
done
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null 2>&1 || { echo "setup: swift is not on PATH; install Swift 6 first" >&2; exit 1; }
