#!/bin/sh
# deps.sh - installs the Debian packages nanoprof needs to build, test and
# benchmark (apt-get when root), or prints the exact apt line and fails.
set -eu
PKGS="cmake make gcc g++ clang pkg-config libelf-dev libdw-dev libzstd-dev libunwind-dev libcmocka-dev uftrace valgrind binutils libc6-dev jq libxml2-utils nodejs gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi qemu-user qemu-system-arm gdb-multiarch libunicorn-dev libcapstone-dev gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf libc6-dev-armhf-cross"
missing=""
# The runtime's tests on other Linux CPUs (tests/port/linux_cross.sh) link
# Debian's arm64 and armhf libelf, libzstd and libunwind: unpacked in
# /opt/nanoprof/sysroot-ARCH, where cmake/<triplet>.cmake finds them, so
# that the host's dpkg keeps its one architecture.
SYSROOT_ARCHS="arm64 armhf"
SYSROOT_PKGS="libelf1 libelf-dev zlib1g zlib1g-dev libzstd1 libzstd-dev libunwind8 libunwind-dev liblzma5 liblzma-dev"
sysroots=""
for a in $SYSROOT_ARCHS; do
    [ -f "/opt/nanoprof/sysroot-$a/.unpacked" ] || sysroots="$sysroots $a"
done
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
[ -z "$missing" ] && [ -z "$sysroots" ] && exit 0
# the apt options that see another architecture's packages besides the host's
apt_for() { echo "-o APT::Architectures::=$(dpkg --print-architecture 2>/dev/null || echo amd64) -o APT::Architectures::=$1"; }
list_for() { for p in $SYSROOT_PKGS; do printf ' %s:%s' "$p" "$1"; done; }
if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    if [ -n "$missing" ]; then
        echo "nanoprof: installing:$missing" >&2
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
    for a in $sysroots; do
        dir=/opt/nanoprof/sysroot-$a
        echo "nanoprof: unpacking$(list_for "$a") in $dir" >&2
        tmp=$(mktemp -d)
        # (an index of another suite caught mid-sync on the mirror makes
        # update fail as a whole: what counts is that the download works)
        # shellcheck disable=SC2046
        apt-get $(apt_for "$a") update -qq 2>/dev/null ||
            echo "nanoprof: apt-get update for $a said errors; downloading from the indexes it has" >&2
        # shellcheck disable=SC2046
        (cd "$tmp" && apt-get $(apt_for "$a") download $(list_for "$a") >/dev/null 2>&1) || {
            echo "nanoprof: apt-get download$(list_for "$a") failed" >&2
            exit 1
        }
        mkdir -p "$dir"
        for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$dir"; done
        rm -rf "$tmp"
        touch "$dir/.unpacked"
    done
else
    echo "nanoprof: missing packages; run:" >&2
    [ -n "$missing" ] && echo "  sudo apt-get install -y$missing" >&2
    for a in $sysroots; do
        echo "  d=\$(mktemp -d) && cd \$d && sudo apt-get $(apt_for "$a") update &&" \
             "apt-get $(apt_for "$a") download$(list_for "$a") &&" \
             "for f in *.deb; do sudo dpkg-deb -x \$f /opt/nanoprof/sysroot-$a; done &&" \
             "sudo touch /opt/nanoprof/sysroot-$a/.unpacked" >&2
    done
    exit 1
fi
