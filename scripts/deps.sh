#!/bin/sh
# deps.sh - installs the Debian packages nanoprof needs to build, test and
# benchmark (apt-get when root), or prints the exact apt line and fails.
set -eu
PKGS="cmake make gcc g++ clang pkg-config libelf-dev libdw-dev libzstd-dev libunwind-dev libcmocka-dev uftrace valgrind binutils libc6-dev jq libxml2-utils nodejs gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-user qemu-system-arm gdb-multiarch libunicorn-dev libcapstone-dev"
missing=""
# `deps.sh bench`: also what make bench needs: npm, which fetches the
# SQLite and zstd sources (bench/fetch_sources.sh); a node.js that ships
# its own npm is fine
if [ "${1:-}" = bench ] && ! command -v npm >/dev/null 2>&1; then
    missing=" npm"
fi
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "nanoprof: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
    echo "nanoprof: missing packages; run:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    exit 1
fi
