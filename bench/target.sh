#!/bin/sh
# target.sh BUILD_DIR - the runtime on a Cortex-M (run by run.sh): what
# each mechanism adds to a firmware, ROM and RAM (arm-none-eabi-size), on
# a Cortex-M4 (mps2-an386) and a Cortex-M0 (microbit); and the
# instructions each event costs on a Cortex-M4, counted on the executed
# path under Unicorn (target_insns). The runtime is built as a user builds
# it: the toolchain file, the board, cmake --install (docs/porting.md).
# Firmware is built at -O2 and linked with --gc-sections.
set -eu
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
T=$BUILD/bench/target
CC=${NP_ARM_CC:-arm-none-eabi-gcc}
SIZE=${NP_ARM_SIZE:-arm-none-eabi-size}
INSNS=$BUILD/bench/target_insns

echo
echo "== target: the runtime on a Cortex-M (targets: by the documented line, <= 1 KiB of ROM a mechanism, 1.5 KiB"
echo "   for function cost and gprof, <= 64 B of RAM beyond the user's buffers; <= 30 instructions a call for the"
echo "   log-mode call trace, <= 100 for function cost, <= 40 and 8 bytes for the ring trace, on a Cortex-M4)"
if ! command -v "$CC" >/dev/null 2>&1 || [ ! -x "$INSNS" ]; then
    echo "target.sh: no $CC or $INSNS: n/a"
    exit 0
fi

# install BOARD TYPE: the runtime for BOARD built as CMAKE_BUILD_TYPE TYPE,
# into $T/BOARD-TYPE/prefix
install() {
    sh "$ROOT/scripts/board_install.sh" cmake "$ROOT" "$1" "$T/$1-$2" -DCMAKE_BUILD_TYPE="$2" >&2 ||
        { echo "target.sh: the runtime for $1 ($2) does not build" >&2; exit 1; }
}

# fw DIR BOARD CPU OUT LIB FLAGS -- SOURCES...: a firmware of the board
# linked with LIB (a library of DIR's install, or "stubs"), its sources
# built with FLAGS, the board's start-up without them
fw() { # (sh has no local variables: fw's own start with f_)
    f_dir=$1 f_board=$2 f_cpu=$3 f_out=$4 f_lib=$5
    shift 5
    f_flags=""
    while [ "$1" != "--" ]; do f_flags="$f_flags $1"; shift; done
    shift
    f_p=$f_dir/prefix
    f_bd=$f_p/share/nanoprof/boards/$f_board
    if [ "$f_lib" = stubs ]; then
        f_link="$f_out.stubs.o"
        "$CC" -mcpu="$f_cpu" -mthumb -O2 -c "$HERE/target/stubs.c" -o "$f_link"
    else
        f_link="-L $f_p/lib -l$f_lib"
    fi
    # shellcheck disable=SC2086
    "$CC" -mcpu="$f_cpu" -mthumb -O2 -I "$f_p/include" $f_flags -c "$@" -o "$f_out.o" 2>"$f_out.err" &&
        "$CC" -mcpu="$f_cpu" -mthumb -O2 -c "$f_bd/startup.c" -o "$f_out.start.o" 2>>"$f_out.err" &&
        "$CC" -mcpu="$f_cpu" -mthumb "$f_out.o" "$f_out.start.o" $f_link -T "$f_bd/link.ld" \
            -nostartfiles --specs=nano.specs --specs=nosys.specs ${GC--Wl,--gc-sections} -Wl,--build-id -o "$f_out" 2>>"$f_out.err" || {
        echo "target.sh: $f_out does not build:" >&2
        cat "$f_out.err" >&2
        exit 1
    }
}

# rom ELF / ram ELF: text + data, data + bss
rom() { "$SIZE" "$1" | awk 'NR == 2 { print $1 + $2 }'; }
ram() { "$SIZE" "$1" | awk 'NR == 2 { print $2 + $3 }'; }

mkdir -p "$T"
# each mechanism's firmware: name, library, instrumentation (commas for spaces)
MECHS="calltrace:nanoprof-calltrace:-finstrument-functions cost:nanoprof-cost:-finstrument-functions
calltrace:nanoprof:-finstrument-functions cost:nanoprof:-finstrument-functions
sections:nanoprof: bins:nanoprof: blocks:nanoprof:-fsanitize-coverage=trace-pc
gprof:nanoprof:-pg,-fno-optimize-sibling-calls trace:nanoprof:-finstrument-functions
trace:nanoprof-trace:-finstrument-functions ring:nanoprof-trace:-finstrument-functions"
CONFIGS="mps2-an386:cortex-m4:RelWithDebInfo mps2-an386:cortex-m4:MinSizeRel microbit:cortex-m0:MinSizeRel"
for c in $CONFIGS; do
    board=${c%%:*} type=${c##*:}
    install "$board" "$type"
done

echo "footprint: bytes a mechanism adds to a firmware that uses it (init, run, dump: everything it links),"
echo "beside the same firmware whose instrumentation calls empty hooks; the user's buffers are in both."
echo "The runtime built as the default build (-O2) or MinSizeRel (-Os)."
printf '%-40s %-20s %12s %12s %12s\n' "mechanism (instrumentation)" "library" "M4 -O2" "M4 -Os" "M0 -Os"
ok_rom=1 ok_ram=1
for m in $MECHS; do
    mech=${m%%:*} rest=${m#*:}
    lib=${rest%%:*}
    flags=$(echo "${rest#*:}" | tr , ' ')
    line=$(printf '%-40s %-20s' "$mech${flags:+ ($flags)}" "lib$lib.a")
    for c in $CONFIGS; do
        board=${c%%:*} rest=${c#*:}
        cpu=${rest%%:*} type=${rest#*:}
        d=$T/$board-$type
        e=$d/fp_${mech}_$lib
        # shellcheck disable=SC2086
        fw "$d" "$board" "$cpu" "$e.elf" "$lib" $flags -DMECH="$mech" -- "$HERE/target/footprint.c"
        # shellcheck disable=SC2086
        fw "$d" "$board" "$cpu" "${e}_stub.elf" stubs $flags -DMECH_STUB -- "$HERE/target/footprint.c"
        r=$(($(rom "$e.elf") - $(rom "${e}_stub.elf")))
        a=$(($(ram "$e.elf") - $(ram "${e}_stub.elf")))
        [ "$r" -le 2048 ] || ok_rom=0
        [ "$a" -eq 0 ] || ok_ram=0
        line="$line $(printf '%12s' "$r/$a")"
    done
    echo "$line"
done
echo "(ROM/RAM bytes: text + data / data + bss)"

# The same, linked by docs/porting.md's line as it is: no --gc-sections,
# so a library object brings all of its functions.
echo
echo "footprint by the documented line (-L P/lib -lnanoprof, no --gc-sections), M4, the runtime at -O2"
printf '%-52s %12s %12s\n' "mechanism (library)" "ROM/RAM" "ROM target"
d=$T/mps2-an386-RelWithDebInfo
GC= # (fw's link flag: none)
line_rom_met=0 line_ram_met=0 line_n=0
for m in $MECHS; do
    mech=${m%%:*} rest=${m#*:}
    lib=${rest%%:*}
    flags=$(echo "${rest#*:}" | tr , ' ')
    e=$d/line_${mech}_$lib
    fw "$d" mps2-an386 cortex-m4 "$e.elf" "$lib" $flags -DMECH="$mech" -- "$HERE/target/footprint.c"
    fw "$d" mps2-an386 cortex-m4 "${e}_stub.elf" stubs $flags -DMECH_STUB -- "$HERE/target/footprint.c"
    r=$(($(rom "$e.elf") - $(rom "${e}_stub.elf"))) a=$(($(ram "$e.elf") - $(ram "${e}_stub.elf")))
    case $mech in cost | gprof) t=1536 ;; *) t=1024 ;; esac
    line_n=$((line_n + 1))
    [ "$r" -gt "$t" ] || line_rom_met=$((line_rom_met + 1))
    [ "$a" -gt 64 ] || line_ram_met=$((line_ram_met + 1))
    printf '%-52s %12s %12s\n' "by the line: $mech (lib$lib.a)" "$r/$a" "<= $t"
done
unset GC

fw "$T/mps2-an386-RelWithDebInfo" mps2-an386 cortex-m4 "$T/insns.elf" nanoprof -finstrument-functions -- "$HERE/target/insns.c"
"$INSNS" "$T/insns.elf" >"$T/insns.out" || { echo "target.sh: target_insns failed" >&2; exit 1; }
per() { awk -v p="$1" -v n="$2" '$2 == p { printf "%.1f", $4 / n }' "$T/insns.out"; }
calls=1000
log=$(per 2 $calls) stack=$(per 3 $calls) cost=$(per 4 $calls) idle=$(per 1 $calls)
sect=$(per 6 $calls) calc=$(per 5 1) trace=$(per 7 $calls) ring=$(per 8 $calls) rdrain=$(per 9 1)
tbytes=$(awk -v n=$calls '$1 == "trace_bytes" { printf "%.1f", $2 / n }' "$T/insns.out")
rbytes=$(awk -v n=$calls '$1 == "ring_bytes" { printf "%.2f", $2 / n }' "$T/insns.out")
rwords=$(awk -v n=$calls '$1 == "ring_words_bytes" { printf "%.2f", $2 / n }' "$T/insns.out")
# the ring again with libnanoprof-trace.a, whose hooks check no other
# mechanism first
fw "$T/mps2-an386-RelWithDebInfo" mps2-an386 cortex-m4 "$T/insns_trace.elf" nanoprof-trace -DTRACE_ONLY \
    -finstrument-functions -- "$HERE/target/insns.c"
"$INSNS" "$T/insns_trace.elf" >"$T/insns_trace.out" || { echo "target.sh: target_insns failed" >&2; exit 1; }
# function cost again with libnanoprof-cost.a, whose hooks check no
# other mechanism first
fw "$T/mps2-an386-RelWithDebInfo" mps2-an386 cortex-m4 "$T/insns_cost.elf" nanoprof-cost -DCOST_ONLY \
    -finstrument-functions -- "$HERE/target/insns.c"
"$INSNS" "$T/insns_cost.elf" >"$T/insns_cost.out" || { echo "target.sh: target_insns failed" >&2; exit 1; }
cost_c=$(awk -v n=$calls '$2 == 4 { printf "%.1f", $4 / n }' "$T/insns_cost.out")
# -pg alone: the runtime built with NP_PG_EXITS, the firmware with -pg
# (its hook, the prologue read back, and the trampoline at the return)
sh "$ROOT/scripts/board_install.sh" cmake "$ROOT" mps2-an386 "$T/mps2-an386-pg" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNP_PG_EXITS=16 >&2 || { echo "target.sh: the runtime with NP_PG_EXITS does not build" >&2; exit 1; }
fw "$T/mps2-an386-pg" mps2-an386 cortex-m4 "$T/insns_pg.elf" nanoprof -pg -- "$HERE/target/insns.c"
"$INSNS" "$T/insns_pg.elf" >"$T/insns_pg.out" || { echo "target.sh: target_insns failed" >&2; exit 1; }
log_pg=$(awk -v n=$calls '$2 == 2 { printf "%.1f", $4 / n }' "$T/insns_pg.out")
cost_pg=$(awk -v n=$calls '$2 == 4 { printf "%.1f", $4 / n }' "$T/insns_pg.out")
ring_t=$(awk -v n=$calls '$2 == 8 { printf "%.1f", $4 / n }' "$T/insns_trace.out")
rdrain_t=$(awk -v n=$calls '$2 == 9 { printf "%.1f", $4 / n }' "$T/insns_trace.out")
# all in: the hooks and the drains (checksums, the writer's calls), a call
ring_all=$(awk -v h="$ring" -v d="$rdrain" -v n=$calls 'BEGIN { printf "%.1f", h + d / n }')
ring_all_t=$(awk -v h="$ring_t" -v d="$rdrain_t" 'BEGIN { printf "%.1f", h + d }')
echo
echo "instructions a call (entry and exit) on a Cortex-M4, executed path, mean of $calls calls"
echo "(the DWT cycle counter as the clock, as on the hardware)"
printf '%-52s %10s %10s\n' "event" "insns" "target"
printf '%-52s %10s %10s\n' "call trace, log mode" "$log" "<= 30"
printf '%-52s %10s\n' "function cost (np_stats_calc apart)" "$cost"
printf '%-52s %10s %10s\n' "function cost, libnanoprof-cost.a" "$cost_c" "<= 100"
printf '%-52s %10s\n' "call trace, stack mode" "$stack"
printf '%-52s %10s\n' "call trace, log mode, -pg alone (NP_PG_EXITS)" "$log_pg"
printf '%-52s %10s\n' "function cost, -pg alone (NP_PG_EXITS)" "$cost_pg"
printf '%-52s %10s\n' "trace recorded on the target (np_trace_init), all in" "$trace"
printf '%-52s %10s\n' "  its bytes a call, headers and END included" "$tbytes"
printf '%-52s %10s\n' "ring trace (np_trace_init_ring), libnanoprof.a, hooks" "$ring"
printf '%-52s %10s\n' "  np_trace_stop's drain of the $calls calls, whole" "$rdrain"
printf '%-52s %10s %10s\n' "  all in (hooks and drain), libnanoprof.a" "$ring_all" "<= 40"
printf '%-52s %10s\n' "ring trace, libnanoprof-trace.a, hooks" "$ring_t"
printf '%-52s %10s\n' "  its drain, a call" "$rdrain_t"
printf '%-52s %10s %10s\n' "  all in (hooks and drain), libnanoprof-trace.a" "$ring_all_t" "<= 40"
printf '%-52s %10s %10s\n' "  the ring's bytes a call, its words (TIME ones too)" "$rwords" "<= 8"
printf '%-52s %10s\n' "  the same, the stream's headers and END included" "$rbytes"
printf '%-52s %10s\n' "hooks with no mechanism on" "$idle"
printf '%-52s %10s\n' "NP_SECTION_BEGIN/END pair" "$sect"
printf '%-52s %10s\n' "  np_stats_calc at the end (one function), whole" "$calc"
echo
echo "== target ratios (PASS when at or under the target)"
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v + 0 <= t + 0) ? "PASS" : "MISS" }'; }
printf '%-52s %10s %10s %s\n' "log-mode call trace, instructions a call (M4)" "<= 30" "$log" "$(verdict "$log" 30)"
printf '%-52s %10s %10s %s\n' "function cost, instructions a call (M4)" "<= 100" "$cost_c" "$(verdict "$cost_c" 100)"
printf '%-52s %10s %10s %s\n' "ring trace, instructions a call, all in (M4)" "<= 40" "$ring_all_t" "$(verdict "$ring_all_t" 40)"
printf '%-52s %10s %10s %s\n' "ring trace, bytes a call in the ring (M4)" "<= 8" "$rwords" "$(verdict "$rwords" 8)"
printf '%-52s %10s %10s %s\n' "ROM by the documented line, mechanisms within target" "$line_n" "$line_rom_met" \
    "$([ "$line_rom_met" = "$line_n" ] && echo PASS || echo MISS)"
printf '%-52s %10s %10s %s\n' "RAM by the line <= 64 B, mechanisms within target" "$line_n" "$line_ram_met" \
    "$([ "$line_ram_met" = "$line_n" ] && echo PASS || echo MISS)"
printf '%-52s %10s %10s %s\n' "ROM of each mechanism, --gc-sections, every build" "<= 2048" "" "$([ $ok_rom = 1 ] && echo PASS || echo MISS)"
printf '%-52s %10s %10s %s\n' "RAM beyond the user's buffers, every build above" "0" "" "$([ $ok_ram = 1 ] && echo PASS || echo MISS)"
