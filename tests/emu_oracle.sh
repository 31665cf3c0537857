#!/bin/sh
# emu_oracle.sh - `nanoprof emu` against qemu-arm on the test firmware
# both can run (tests/firmware): the same stdout, byte for byte, and the
# same exit code, for each case below. With --qemu-only, qemu-arm's runs
# are checked against the expected outputs instead (the firmware and this
# script, without the emulator).
#
#   sh emu_oracle.sh BUILD_DIR [--qemu-only]
set -u
build=$1
mode=${2:-oracle}
here=$(cd "$(dirname "$0")" && pwd)
fw=$build/tests/firmware
expected=$here/firmware/expected
nanoprof=$build/src/nanoprof

command -v qemu-arm >/dev/null || { echo "emu_oracle: qemu-arm not found (scripts/deps.sh)"; exit 1; }
if [ "$mode" = oracle ] && [ ! -x "$nanoprof" ]; then
    echo "emu_oracle: $nanoprof not found"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emu_oracle.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
files=$tmp/files # the semihost program's directory: DIR below
mkdir "$files"
failures=0
cases=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# The input of a case: none, or lines of which the last is unfinished.
feed() {
    case $1 in
    stdin) printf 'one\ntwo\nthree' ;;
    esac
}

# The "ADDRESS COUNT" lines of the instr firmware ($1)'s output ($2) as
# "NAME COUNT", by its symbols (without their Thumb bit); other lines as
# they are.
name_counts() {
    arm-none-eabi-nm "$1" | awk '
        function hex(s,   v, i) {
            v = 0
            for (i = 1; i <= length(s); i++)
                v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return v
        }
        NR == FNR {
            if ($2 ~ /^[tT]$/) {
                v = hex($1)
                name[sprintf("0x%08x", v - v % 2)] = $3
            }
            next
        }
        $1 ~ /^0x/ { print (($1 in name) ? name[$1] : $1), $2; next }
        { print }' - "$2"
}

# Compares name counts ($1) with an expected file ($2) where a count "*"
# matches any.
same_counts() {
    awk 'NR == FNR { want[$1] = $2; n++; next }
         { if (!($1 in want) || (want[$1] != "*" && want[$1] != $2)) bad = 1; seen++ }
         END { exit bad || seen != n }' "$2" "$1"
}

# check OUT NAME CPU STATUS INPUT ARGS...: runs firmware NAME with ARGS
# (DIR stands for the files directory). OUT: its expected stdout in
# expected/ ("-": none to check; *.calls: the instr report by name).
check() {
    out=$1 name=$2 cpu=$3 status=$4 input=$5
    shift 5
    elf=$fw/$name.elf
    what="$name $* (--cpu $cpu)"
    n=$#
    for a in "$@"; do
        [ "$a" = DIR ] && a=$files
        set -- "$@" "$a"
    done
    shift "$n"
    cases=$((cases + 1))
    feed "$input" | qemu-arm "$elf" "$@" >"$tmp/qemu.out" 2>"$tmp/qemu.err"
    qs=$?
    [ "$qs" = "$status" ] || fail "$what: qemu-arm exits $qs, not $status: $(head -c 300 "$tmp/qemu.err")"
    [ -z "$(ls -A "$files")" ] || fail "$what: files left in DIR under qemu-arm"
    rm -rf "${files:?}"/*
    if [ "$mode" = --qemu-only ]; then
        case $out in
        -) ;;
        *.calls)
            name_counts "$elf" "$tmp/qemu.out" | grep -v '^sum ' >"$tmp/names"
            same_counts "$tmp/names" "$expected/$out" ||
                fail "$what: the hooks' counts are not $out:$(echo; cat "$tmp/names")" ;;
        *)
            cmp -s "$expected/$out" "$tmp/qemu.out" ||
                fail "$what: stdout is not $out:$(echo; diff "$expected/$out" "$tmp/qemu.out" | head -20)" ;;
        esac
        return
    fi
    feed "$input" | "$nanoprof" emu --cpu "$cpu" -o "$tmp/profile" "$elf" "$@" >"$tmp/emu.out" 2>"$tmp/emu.err"
    es=$?
    [ "$es" = "$qs" ] || fail "$what: nanoprof emu exits $es, qemu-arm $qs: $(head -c 300 "$tmp/emu.err")"
    cmp -s "$tmp/qemu.out" "$tmp/emu.out" ||
        fail "$what: stdout differs from qemu-arm's:$(echo; diff "$tmp/qemu.out" "$tmp/emu.out" | head -20)"
    [ -z "$(ls -A "$files")" ] || fail "$what: files left in DIR under nanoprof emu"
    rm -rf "${files:?}"/*
}

#     OUT                 NAME            CPU        STATUS INPUT ARGS
check calls.out           calls_arm       arm7tdmi   0      -
check calls.out           calls_thumb     arm7tdmi   0      -
check calls_v5.out        calls_v5        arm946e-s  0      -
check resync.out          resync          arm7tdmi   0      -
check threads.out         threads         arm7tdmi   0      -
check labels.out          labels          arm7tdmi   0      -
check semihost.out        semihost_arm    arm7tdmi   0      -     DIR 0
check semihost.out        semihost_thumb  arm7tdmi   0      -     DIR 0
check semihost_3.out      semihost_arm    arm946e-s  3      -     DIR 3
check semihost_stdin.out  semihost_thumb  arm7tdmi   0      stdin DIR 0 stdin
check semihost_abort.out  semihost_arm    arm7tdmi   1      -     DIR 0 abort
check instr.calls         instr_arm       arm7tdmi   0      -
check instr.calls         instr_thumb     arm946e-s  0      -
check fib.out             fib_arm         arm7tdmi   0      -
check fib.out             fib_thumb       arm7tdmi   0      -
check crc32.out           crc32_arm       arm7tdmi   0      -
check crc32.out           crc32_thumb     arm946e-s  0      -

if [ "$failures" != 0 ]; then
    echo "emu_oracle: $failures of $cases cases failed"
    exit 1
fi
echo "emu_oracle: $cases cases pass ($mode)"
