#!/bin/sh
# deps.sh - installs the Debian packages nanoprof needs to build, test and
# benchmark (apt-get when root), or prints the exact apt line and fails.
set -eu
PKGS="cmake make gcc g++ clang pkg-config libelf-dev libdw-dev libzstd-dev libunwind-dev libcmocka-dev uftrace valgrind binutils libc6-dev jq libxml2-utils nodejs gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-user qemu-system-arm gdb-multiarch libunicorn-dev libcapstone-dev gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross"
missing=""
# The AArch64 runtime's tests (tests/port/linux_a64.sh) link Debian's arm64
# libelf, libzstd and libunwind: unpacked where cmake/aarch64-linux-gnu.cmake
# finds them, so that the host's dpkg keeps its one architecture.
A64_SYSROOT=/opt/nanoprof/sysroot-arm64
A64_PKGS="libelf1 libelf-dev zlib1g zlib1g-dev libzstd1 libzstd-dev libunwind8 libunwind-dev liblzma5 liblzma-dev"
a64_missing=""
[ -f "$A64_SYSROOT/.unpacked" ] || a64_missing=1
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
[ -z "$missing" ] && [ -z "$a64_missing" ] && exit 0
# the apt options that see arm64 packages besides the host's
a64_apt="-o APT::Architectures::=$(dpkg --print-architecture 2>/dev/null || echo amd64) -o APT::Architectures::=arm64"
a64_list=$(for p in $A64_PKGS; do printf ' %s:arm64' "$p"; done)
if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    if [ -n "$missing" ]; then
        echo "nanoprof: installing:$missing" >&2
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
    if [ -n "$a64_missing" ]; then
        echo "nanoprof: unpacking$a64_list in $A64_SYSROOT" >&2
        tmp=$(mktemp -d)
        # shellcheck disable=SC2086
        apt-get $a64_apt update -qq
        # shellcheck disable=SC2086
        (cd "$tmp" && apt-get $a64_apt download $a64_list >/dev/null 2>&1) || {
            echo "nanoprof: apt-get download$a64_list failed" >&2
            exit 1
        }
        mkdir -p "$A64_SYSROOT"
        for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$A64_SYSROOT"; done
        rm -rf "$tmp"
        touch "$A64_SYSROOT/.unpacked"
    fi
else
    echo "nanoprof: missing packages; run:" >&2
    [ -n "$missing" ] && echo "  sudo apt-get install -y$missing" >&2
    if [ -n "$a64_missing" ]; then
        echo "  d=\$(mktemp -d) && cd \$d && sudo apt-get $a64_apt update &&" \
             "apt-get $a64_apt download$a64_list &&" \
             "for f in *.deb; do sudo dpkg-deb -x \$f $A64_SYSROOT; done && sudo touch $A64_SYSROOT/.unpacked" >&2
    fi
    exit 1
fi
