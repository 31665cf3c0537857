#!/bin/sh
# test_debug_file.sh NANOPROF REC_PROG_HOOKLESS - names from a separate
# debug file, as distributions ship them: a copy of rec_prog stripped of
# its .symtab and DWARF, its debug file made by objcopy --only-keep-debug,
# found through .gnu_debuglink (beside it, in .debug/) and through its
# build-id under NANOPROF_DEBUG_DIR; a debug file of another build is not
# used; the recorder's -F finds names the same way. Mode "tree": top calls
# a x3 and b x2, each calling leaf.
set -u
np=$1
orig=$2
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
need objcopy strip readelf

mkdir -p "$tmp/bin"
prog=$tmp/bin/prog
cp "$orig" "$prog"
objcopy --only-keep-debug "$prog" "$tmp/prog.debug"
strip --strip-all "$prog"
readelf -S "$prog" | grep -q '\.symtab' && bad "strip left .symtab"
"$np" record -o "$tmp/t" -- "$prog" tree >/dev/null 2>&1 || { echo "FAIL recording"; exit 1; }

# names ARGS...: report's functions, sorted (the env for nanoprof given first)
names() {
    env "$@" "$np" report --format=csv "$tmp/t" 2>"$tmp/err" | cut -d, -f1,2 | sed 1d | sort | tr '\n' ' '
}
want='a,3 b,2 leaf,8 main,1 top,1 '

got=$(names NANOPROF_DEBUG_DIR="$tmp/none")
case $got in
    *'top,1'*) bad "stripped, no debug file: names anyway ($got)" ;;
    *) ok "stripped, no debug file: addresses" ;;
esac

# .gnu_debuglink: beside the file, then in its .debug/
objcopy --add-gnu-debuglink="$tmp/prog.debug" "$prog"
cp "$tmp/prog.debug" "$tmp/bin/prog.debug"
"$np" record -o "$tmp/t" -- "$prog" tree >/dev/null 2>&1 || { echo "FAIL recording"; exit 1; }
got=$(names NANOPROF_DEBUG_DIR="$tmp/none")
[ "$got" = "$want" ] && ok "debuglink beside the file: names and calls" || bad "debuglink beside: '$got'"
mkdir -p "$tmp/bin/.debug"
mv "$tmp/bin/prog.debug" "$tmp/bin/.debug/prog.debug"
got=$(names NANOPROF_DEBUG_DIR="$tmp/none")
[ "$got" = "$want" ] && ok "debuglink in .debug/" || bad "debuglink in .debug/: '$got'"
# the recorder's filters name the stripped program's functions the same way
"$np" record -F top -o "$tmp/t" -- "$prog" tree >/dev/null 2>&1 || { echo "FAIL recording -F"; exit 1; }
got=$(names NANOPROF_DEBUG_DIR="$tmp/none")
[ "$got" = 'a,3 b,2 leaf,8 top,1 ' ] && ok "record -F top: the calls inside top only" || bad "record -F top: '$got'"
"$np" record -o "$tmp/t" -- "$prog" tree >/dev/null 2>&1 || { echo "FAIL recording"; exit 1; }
rm -rf "$tmp/bin/.debug"

# build-id under NANOPROF_DEBUG_DIR (the second of two directories)
id=$(readelf -n "$prog" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || { bad "no build-id in $prog (linked with --build-id)"; finish; }
d=$tmp/dbg/.build-id/$(echo "$id" | cut -c1-2)
mkdir -p "$d"
cp "$tmp/prog.debug" "$d/$(echo "$id" | cut -c3-).debug"
got=$(names NANOPROF_DEBUG_DIR="$tmp/none:$tmp/dbg")
[ "$got" = "$want" ] && ok "build-id under NANOPROF_DEBUG_DIR" || bad "build-id: '$got'"
# and source lines from its DWARF
NANOPROF_DEBUG_DIR="$tmp/dbg" "$np" report --format=csv "$tmp/t" >"$tmp/out" 2>"$tmp/err"
grep -q '^top,.*,[^,]*rec_prog\.c,[0-9][0-9]*,' "$tmp/out" && ok "build-id: source lines from the debug file" ||
    { bad "build-id: no source line for top"; head -3 "$tmp/out"; }
# the debug file of another program (another build-id) is not used,
# nor a file that is not ELF
rm -f "$d"/*.debug
objcopy --only-keep-debug "$(command -v readelf)" "$d/$(echo "$id" | cut -c3-).debug"
got=$(names NANOPROF_DEBUG_DIR="$tmp/dbg")
case $got in
    *'top,1'*) bad "another program's debug file was used ($got)" ;;
    *) ok "another program's debug file: not used" ;;
esac
printf 'not a debug file' >"$d/$(echo "$id" | cut -c3-).debug"
got=$(names NANOPROF_DEBUG_DIR="$tmp/dbg")
case $got in
    *'top,1'*) bad "a file that is not ELF was used ($got)" ;;
    *) ok "a file that is not ELF: not used" ;;
esac
finish
