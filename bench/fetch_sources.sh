#!/bin/sh
# fetch_sources.sh DIR - the sources of two programs nobody here wrote,
# for the benchmarks: the SQLite amalgamation and zstd's library, as the
# npm registry carries them inside better-sqlite3 and zstd-napi (Debian
# ships neither as source in a binary package). Pinned versions; fetched
# once into DIR (DIR/sqlite3/sqlite3.c, DIR/zstd/lib/...).
set -eu
DIR=$1
SQLITE_PKG=better-sqlite3@12.11.1
ZSTD_PKG=zstd-napi@0.0.13
[ -f "$DIR/sqlite3/sqlite3.c" ] && [ -f "$DIR/zstd/lib/zstd.h" ] && exit 0
command -v npm >/dev/null 2>&1 || { echo "fetch_sources.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$DIR"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npfetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
(cd "$tmp" && npm pack --silent "$SQLITE_PKG" "$ZSTD_PKG" >/dev/null 2>&1) ||
    { echo "fetch_sources.sh: npm pack $SQLITE_PKG $ZSTD_PKG failed" >&2; exit 1; }
for t in "$tmp"/*.tgz; do tar xzf "$t" -C "$tmp" && mv "$tmp/package" "$tmp/$(basename "$t" .tgz)"; done
rm -rf "$DIR/sqlite3" "$DIR/zstd"
mkdir -p "$DIR/sqlite3"
cp "$tmp"/better-sqlite3-*/deps/sqlite3/sqlite3.c "$tmp"/better-sqlite3-*/deps/sqlite3/sqlite3.h "$DIR/sqlite3/"
cp -r "$tmp"/zstd-napi-*/deps/zstd "$DIR/zstd"
