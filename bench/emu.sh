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
set -eu
BUILD=${1:-build}
B=$BUILD/bench
NP=$BUILD/src/nanoprof
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
