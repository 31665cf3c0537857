#!/bin/sh
# emu.sh BUILD_DIR - the emulator's speed (run by run.sh): emulated
# instructions per second of `nanoprof emu` (call tracking, cycle counting
# and the trace written: the whole command) on call-heavy firmware (fib)
# and loop-heavy firmware (crc32), ARM and Thumb builds, beside Unicorn 2
# with no hook (bench_emu_unicorn), qemu-arm (no profiling) and valgrind
# --tool=callgrind on the same program built for x86-64. Every figure is
# a whole process's wall time, the best of NP_BENCH_EMU_RUNS (default 3);
# instructions are the emulator's exact count for the ARM builds (the same
# ELF runs the same instructions under each engine) and callgrind's
# collected Ir for x86-64. docs/performance.md explains the table.
# Then the same programs built for a Cortex-M4F (vectors at 0) on the
# emulator's Cortex-M CPU: the whole command beside the interpreter alone
# with no branch hook (bench/emu_speed: tracking's cost is the ratio),
# qemu-system-arm -M mps2-an386 running the ELF, and Unicorn's Cortex-M4
# with a hook on every block (the least a profiler on Unicorn pays).
# Then Cortex-M firmware through QEMU (nanoprof emu --qemu): its whole
# command beside qemu-system-arm running the same ELF without a log, the
# speed of import --qemu-log on the log, and the calls the test firmware's
# own -finstrument-functions hooks count against its QEMU log.
set -eu
BUILD=${1:-build}
B=$BUILD/bench
NP=$BUILD/src/nanoprof
FW=$BUILD/tests/firmware
RUNS=${NP_BENCH_EMU_RUNS:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npemu.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

echo
echo "== emulator: million emulated instructions per second, whole process (target: nanoprof emu >= 200)"
if [ ! -x "$NP" ] || [ ! -f "$B/emu_fib_arm.elf" ]; then
    echo "emu.sh: no $NP or firmware in $B: n/a"
    exit 0
fi

# best COMMAND...: the shortest wall seconds of RUNS runs; stderr in $TMP/err
best() {
    b=""
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        s=$(date +%s.%N)
        "$@" >"$TMP/out" 2>"$TMP/err" || { echo "emu.sh: failed: $*" >&2; cat "$TMP/err" >&2; exit 1; }
        e=$(date +%s.%N)
        b=$(echo "$s $e ${b:-}" | awk '{ t = $2 - $1; if ($3 != "" && $3 < t) t = $3; printf "%.4f\n", t }')
        i=$((i + 1))
    done
    echo "$b"
}
mips() { echo "$1 $2" | awk '{ printf "%.0f", $1 / $2 / 1e6 }'; }

printf '%-14s %14s %12s %12s %12s %12s\n' firmware instructions "nanoprof" "unicorn" "qemu-arm" "callgrind"
fails=0
for w in fib crc32; do
    for isa in arm thumb; do
        elf=$B/emu_${w}_${isa}.elf
        t_np=$(best "$NP" emu -o "$TMP/trace" "$elf")
        insns=$(sed -n 's/.* after \([0-9]*\) instructions.*/\1/p' "$TMP/err" | head -n 1)
        [ -n "$insns" ] || { echo "emu.sh: no instruction count from nanoprof emu" >&2; cat "$TMP/err" >&2; exit 1; }
        t_uc=$(best "$B/bench_emu_unicorn" "$elf")
        t_q=$(best qemu-arm "$elf")
        cg="n/a"
        if [ "$isa" = arm ] && command -v valgrind >/dev/null 2>&1; then
            t_cg=$(best valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B/bench_emu_${w}_x86")
            ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$TMP/err" | head -n 1)
            cg=$(mips "$ir" "$t_cg")
        fi
        m=$(mips "$insns" "$t_np")
        printf '%-14s %14s %12s %12s %12s %12s\n' "${w}_$isa" "$insns" "$m" "$(mips "$insns" "$t_uc")" \
            "$(mips "$insns" "$t_q")" "$cg"
        [ "$m" -ge 200 ] || fails=$((fails + 1))
    done
done
echo "(callgrind: the x86-64 build's own instruction count; the same program, not the same instructions)"
if [ "$fails" -eq 0 ]; then
    echo "nanoprof emu >= 200 M instructions/s on every firmware          PASS"
else
    echo "nanoprof emu >= 200 M instructions/s on every firmware          MISS ($fails below)"
fi

echo
echo "== emulator, Cortex-M4: million emulated instructions per second, whole process (target: nanoprof emu >= 300)"
printf '%-10s %14s %10s %10s %10s %12s %14s\n' firmware instructions nanoprof "no hook" qemu "unicorn+blk" "track/no-hook"
cm_fails=0
for w in fib crc32; do
    elf=$B/emu_${w}_m4.elf
    t_np=$(best "$NP" emu -o "$TMP/trace" "$elf")
    insns=$(sed -n 's/.* after \([0-9]*\) instructions.*/\1/p' "$TMP/err" | head -n 1)
    [ -n "$insns" ] || { echo "emu.sh: no instruction count from nanoprof emu" >&2; cat "$TMP/err" >&2; exit 1; }
    # the interpreter alone: its own best-of (in-process, no start-up)
    "$B/emu_speed" --cpu=cortex-m4 --repeat="$RUNS" --quiet "$elf" >"$TMP/speed" 2>&1 ||
        { echo "emu.sh: emu_speed failed" >&2; cat "$TMP/speed" >&2; exit 1; }
    t_alone=$(sed -n 's/.*no hook: .* best of [0-9]*: \([0-9.]*\) s.*/\1/p' "$TMP/speed")
    t_q=$(best qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$elf")
    t_uc=$(best "$B/bench_emu_unicorn" --cortex-m4 --block-hook "$elf")
    m=$(mips "$insns" "$t_np")
    printf '%-10s %14s %10s %10s %10s %12s %14s\n' "${w}_m4" "$insns" "$m" "$(mips "$insns" "$t_alone")" \
        "$(mips "$insns" "$t_q")" "$(mips "$insns" "$t_uc")" "$(echo "$t_np $t_alone" | awk '{ printf "%.2f", $1 / $2 }')"
    [ "$m" -ge 300 ] || cm_fails=$((cm_fails + 1))
done
echo "(no hook: the interpreter alone, in process; track/no-hook: the whole command's time over it, tracking's cost)"
# the calls the firmware's own hooks counted, against the emulator's, in one run
if [ -f "$FW/cm_hooks_emu.elf" ]; then
    "$NP" emu --board mps2-an385 -o "$TMP/hk" "$FW/cm_hooks_emu.elf" >/dev/null 2>"$TMP/hk.err"
    sed -n 's/^hook 0x\([0-9a-f]*\) \([0-9]*\)$/\1 \2/p' "$TMP/hk.err" | while read -r a n; do
        echo "$(${NP_ARM_ADDR2LINE:-arm-none-eabi-addr2line} -f -e "$FW/cm_hooks_emu.elf" "0x$a" | head -1) $n"
    done | LC_ALL=C sort >"$TMP/hooks"
    "$NP" report --format=csv "$TMP/hk" 2>/dev/null | awk -F, 'NR > 1 && $2 > 0 { print $1, $2 }' | LC_ALL=C sort >"$TMP/emuc"
    n=$(wc -l <"$TMP/hooks")
    d=$(LC_ALL=C join -a1 -e0 -o 0,1.2,2.2 "$TMP/hooks" "$TMP/emuc" | awk '$2 != $3' | wc -l)
    printf '%-60s %s\n' "call counts, hooks in the binary vs nanoprof emu: functions" "$n"
    printf '%-60s %s %s\n' "  of them with other counts (target 0)" "$d" "$([ "$d" -eq 0 ] && [ "$n" -gt 0 ] && echo PASS || echo MISS)"
fi
if [ "$cm_fails" -eq 0 ]; then
    echo "nanoprof emu >= 300 M instructions/s on the Cortex-M4 firmware    PASS"
else
    echo "nanoprof emu >= 300 M instructions/s on the Cortex-M4 firmware    MISS ($cm_fails below)"
fi

echo
echo "== emulator on QEMU: nanoprof emu --qemu, Cortex-M3 firmware on mps2-an385, whole process"
if ! command -v qemu-system-arm >/dev/null 2>&1 || [ ! -f "$FW/cm_fib.elf" ]; then
    echo "emu.sh: no qemu-system-arm or $FW/cm_fib.elf: n/a"
    exit 0
fi
elf=$FW/cm_fib.elf
qemu_alone() {
    qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none -semihosting-config enable=on,target=native \
        -icount shift=0 -kernel "$elf" "$@"
}
t_np=$(best "$NP" emu --qemu mps2-an385 -o "$TMP/qtrace" "$elf")
insns=$(sed -n 's/.* after \([0-9]*\) instructions;.*/\1/p' "$TMP/err" | head -n 1)
[ -n "$insns" ] || { echo "emu.sh: no instruction count from nanoprof emu --qemu" >&2; cat "$TMP/err" >&2; exit 1; }
t_q=$(best qemu_alone)
t_log=$(best qemu_alone -d exec,cpu,nochain -D "$TMP/q.log")
bytes=$(wc -c <"$TMP/q.log")
t_imp=$(best "$NP" import --qemu-log "$TMP/q.log" --elf "$elf" -o "$TMP/qimp")
printf '%-10s %14s %12s %12s %12s %14s %14s\n' firmware instructions "emu --qemu" "qemu" "qemu+log" "--qemu/qemu" \
    "import MB/s"
mips1() { echo "$1 $2" | awk '{ printf "%.1f", $1 / $2 / 1e6 }'; }
printf '%-10s %14s %12s %12s %12s %14s %14s\n' cm_fib "$insns" "$(mips1 "$insns" "$t_np")" "$(mips1 "$insns" "$t_q")" \
    "$(mips1 "$insns" "$t_log")" "$(echo "$t_np $t_q" | awk '{ printf "%.1f", $1 / $2 }')" \
    "$(echo "$bytes $t_imp" | awk '{ printf "%.0f", $1 / $2 / 1e6 }')"
echo "(M instructions/s; --qemu/qemu: the whole command's time over QEMU's without a log; the log is -d exec,cpu,nochain)"
# the calls the firmware's hooks counted against its QEMU log
qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none -semihosting-config enable=on,target=native \
    -icount shift=0 -kernel "$FW/cm_hooks.elf" -d exec,nochain -D "$TMP/h.log" >"$TMP/h.out" 2>&1
sed -n 's/^hook 0x\([0-9a-f]*\) \([0-9]*\)$/\1 \2/p' "$TMP/h.out" | while read -r a n; do
    echo "$(${NP_ARM_ADDR2LINE:-arm-none-eabi-addr2line} -f -e "$FW/cm_hooks.elf" "0x$a" | head -1) $n"
done | LC_ALL=C sort >"$TMP/hooks"
"$NP" report --format=csv --elf "$FW/cm_hooks.elf" "$TMP/h.log" 2>/dev/null |
    awk -F, 'NR > 1 && $2 > 0 { print $1, $2 }' | LC_ALL=C sort >"$TMP/logc"
n=$(wc -l <"$TMP/hooks")
d=$(LC_ALL=C join -a1 -e0 -o 0,1.2,2.2 "$TMP/hooks" "$TMP/logc" | awk '$2 != $3' | wc -l)
printf '%-60s %s\n' "call counts, hooks in the binary vs its QEMU log: functions" "$n"
printf '%-60s %s %s\n' "  of them with other counts (target 0)" "$d" "$([ "$d" -eq 0 ] && [ "$n" -gt 0 ] && echo PASS || echo MISS)"
