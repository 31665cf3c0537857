#!/bin/sh
# reports.sh CC QEMU SRC_DIR NANOPROF FILE... - a target's reports as
# records: reports_fw.c, built with the core and the port as libnanoprof
# builds them (FILE..., relative to SRC_DIR/src), runs on mps2-an385
# (M3), mps2-an386 (M4) and microbit (M0) under -icount; `nanoprof
# import` of its output prints, byte for byte, the lines the firmware
# wrote beside each record ("want: ..."), its functions named from the
# ELF's symbols here (an address in a function: NAME+0xOFFSET, as a
# block's line has it), its errors' text read from .np_msg. The runtime
# itself writes no text: no line of the output starts with "nanoprof". A
# view of the capture says, in one note, that it holds reports alone.
set -u
CC=$1
QEMU=$2
SRC=$3
NP=$4
shift 4
FILES="$*"
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
. "$SRC/tests/port/fw_build.sh"
NM=$(dirname "$(command -v "$CC")")/arm-none-eabi-nm

# named ELF < LINES: a line's leading address named as the host names it
named() {
    "$NM" -n "$1" | python3 -c '
import re, sys
syms = []
for l in sys.stdin:
    f = l.split()
    if len(f) == 3 and f[1] in "tTwW" and not f[2].startswith("$"):
        syms.append((int(f[0], 16), f[2]))
lines = open(sys.argv[1]).read().splitlines()
for line in lines:
    m = re.match(r"( *)0x([0-9a-f]+)(: .*)$", line)
    if m:
        addr = int(m.group(2), 16) & ~1
        best = max((s for s in syms if s[0] <= addr), default=None)
        if best and re.match(r": [0-9]+$", m.group(3)):
            line = "%s%s+0x%x%s" % (m.group(1), best[1], addr - best[0], m.group(3))
        elif best and best[0] == addr:
            line = m.group(1) + best[1] + m.group(3)
    print(line)
' "$2"
}

for board in mps2-an385:cortex-m3:mps2 mps2-an386:cortex-m4:mps2 microbit:cortex-m0:microbit; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    ld=${rest#*:}
    dir=$TMP/$name
    if ! fw_build "$dir" "$cpu" "$ld" -DLEAF_TURNS=20 "$SRC/tests/port/reports_fw.c" "$SRC/tests/target/check.c"; then
        say_fail "$name: the firmware does not build"
        continue
    fi
    fw_run "$dir" "$name" "$dir/out" || continue
    grep -a '^want: ' "$dir/out" | sed 's/^want: //' > "$dir/want.raw"
    named "$dir/fw.elf" "$dir/want.raw" > "$dir/want"
    "$NP" import "$dir/out" --elf "$dir/fw.elf" -o "$dir/trace" > "$dir/got" 2> "$dir/err"
    irc=$?
    lines=$(wc -l < "$dir/want")
    if [ $irc -ne 0 ] || ! cmp -s "$dir/want" "$dir/got" || [ "$lines" -lt 25 ]; then
        say_fail "$name: import exit $irc, $lines lines wanted; stderr: $(cat "$dir/err")"
        diff "$dir/want" "$dir/got" | sed 's/^/  /'
    elif grep -aq '^nanoprof' "$dir/out" || [ -e "$dir/trace" ]; then
        say_fail "$name: the runtime wrote text, or import wrote a trace of no events"
    else
        echo "ok: $name ($cpu): $lines report lines imported as the firmware made them"
    fi
    # a view of the capture: no trace in it to be cut short, one note
    "$NP" report --strict "$dir/out" --elf "$dir/fw.elf" > /dev/null 2> "$dir/view.err" ||
        say_fail "$name: report --strict of the capture: exit $?: $(cat "$dir/view.err")"
    [ "$(cat "$dir/view.err")" = "nanoprof report: note: $dir/out: the firmware's reports ($lines) and no trace: \`nanoprof import\` prints them" ] ||
        say_fail "$name: report of the capture said: $(cat "$dir/view.err")"
    # each mechanism's lines, named (not only as the firmware made them)
    for line in 'nanoprof: np_stats_dump: not a statistics table (np_stats_init first)' \
        'top: count 1, cost ' 'mid: count 2, ' 'leaf: count 6, ' 'region: count 1, ' '    leaf: lr=0x' \
        'phase one: count 1, time ' 'section 2: count 1, time ' '1 work 0' 'blocks: 2 blocks, 8 executions, 0 lost, 8 slots' \
        'blocks+0x'; do
        grep -qF "$line" "$dir/got" || say_fail "$name: no line with \"$line\" in import's output"
    done
done
exit $fail
