#!/bin/sh
# task_names.sh CC QEMU SRC_DIR NANOPROF FILE... - an RTOS's tasks by name,
# and a preemptive scheduler's own switching code instrumented.
# tasks_fw.c (three tasks named with np_thread_name, main's own state
# named too, a round-robin scheduler switching in PendSV whose C code
# sched_pick is built with -finstrument-functions) is built with the core
# and the port (FILE..., relative to SRC_DIR/src; SysTick's handler the
# firmware's: NP_CM_SYSTICK_HANDLER=0), runs on mps2-an385 (M3),
# mps2-an386 (M4) and microbit (M0) under -icount, and its trace is
# imported. Checked exactly: the task names in tree, replay, the flame
# graph and the Chrome trace's thread_name metadata (jq); the calls of
# each task's work; sched_pick's calls, overall as many as the firmware
# counted switches, per task as many as it counted that task switched
# out; the capture read as it is (--elf) the same. Then, built with
# -DSWITCH_INSIDE (sched_pick calls np_thread_switch itself, as
# FreeRTOS's vTaskSwitchContext holds traceTASK_SWITCHED_IN): the same
# counts, but each of its calls in a task lasts the other two tasks'
# slices (the call begins in the task going out and ends when it comes
# back), where it lasts a few dozen cycles otherwise. On the ARMv7-M
# boards, PendSV as a naked C function (as FreeRTOS's ports write it)
# switches the same when it is not instrumented; instrumented, the hook
# call comes before anything is saved (EXC_RETURN in lr lost) and the
# firmware fails.
set -u
CC=$1
QEMU=$2
SRC=$3
NP=$4
shift 4
FILES="$*"
# NP_TRACE_RING=1: the trace as a ring's raw words (the firmware's
# np_trace_init renamed np_trace_init_ring), which import decodes: the same
# checks hold
RING=${NP_TRACE_RING:+-Dnp_trace_init=np_trace_init_ring}
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
FW_DEFINES=-DNP_BINS_MAX=16
RT_FLAGS=-DNP_CM_SYSTICK_HANDLER=0 # the firmware's SysTick handler
. "$SRC/tests/port/fw_build.sh"
fw="$SRC/tests/port/tasks_fw.c $SRC/tests/target/check.c"
for tool in jq "$CC" "$QEMU"; do
    command -v "$tool" > /dev/null || { echo "FAIL: $tool is not installed (scripts/deps.sh installs it)"; exit 1; }
done

# run DIR BOARD [NOTE] - DIR/capture from QEMU, the firmware's checks
# passed, imported into DIR/trace, report and tree saying nothing on
# stderr but NOTE (as "nanoprof CMD: note: NOTE"); 1 when not
run() {
    d=$1 b=$2 note=${3:-}
    timeout 120 "$QEMU" -M "$b" -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$d/fw.elf" > "$d/capture" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! grep -aqx PASSED "$d/capture"; then
        say_fail "$d: the firmware's checks, exit status $rc:"
        grep -a 'ok \|FAIL ' "$d/capture" | sed 's/^/  /'
        return 1
    fi
    if ! "$NP" import "$d/capture" --elf "$d/fw.elf" -o "$d/trace" 2> "$d/import.err"; then
        say_fail "$d: import: $(cat "$d/import.err")"
        return 1
    fi
    grep -q "^nanoprof import: [0-9]* events of 4 threads, 0 lost, into $d/trace\$" "$d/import.err" ||
        say_fail "$d: import said: $(cat "$d/import.err")"
    "$NP" report "$d/trace" > "$d/report" 2> "$d/report.err" || say_fail "$d: report: $(cat "$d/report.err")"
    "$NP" tree "$d/trace" > "$d/tree" 2> "$d/tree.err" || say_fail "$d: tree: $(cat "$d/tree.err")"
    for cmd in report tree; do
        if [ -n "$note" ]; then echo "nanoprof $cmd: note: $note"; fi > "$d/$cmd.want"
        cmp -s "$d/$cmd.err" "$d/$cmd.want" || say_fail "$d: $cmd said: $(cat "$d/$cmd.err")"
    done
}

# calls NAME REPORT - the Calls column of NAME's row in a flat report
calls() {
    awk -v f="$1" '$NF == f { print $(NF-7) }' "$2"
}

# tree_sum NAME COLUMN TREE - per thread of a call tree, "NAME: the sum of
# COLUMN (1: calls, 2: total) over FUNCTION's rows", one line a thread
tree_sum() {
    awk -v fn="$1" -v col="$2" '
        / thread [0-9]+ "/ { if (name != "") print name ": " s; match($0, /"[^"]*"/); name = substr($0, RSTART + 1, RLENGTH - 2); s = 0; next }
        $NF == fn { s += $col }
        END { if (name != "") print name ": " s }' "$3"
}

for board in mps2-an385:cortex-m3:mps2:25000000 mps2-an386:cortex-m4:mps2:25000000 microbit:cortex-m0:microbit:16000000; do
    name=${board%%:*}
    rest=${board#*:}
    cpu=${rest%%:*}
    rest=${rest#*:}
    ld=${rest%%:*}
    hz=${rest#*:}
    dir=$TMP/$name
    if ! fw_build "$dir" $cpu $ld $RING -DTC_CPU_HZ=${hz}u $fw; then
        say_fail "$name: build"
        continue
    fi
    run "$dir" "$name" || continue
    picks=$(grep -a '^picks ' "$dir/capture" | cut -d' ' -f2)
    # the names, in every view
    head -1 "$dir/report" | grep -q "^# $dir/trace: 1 process, 4 threads, $((picks + 13)) calls of 4 functions, cycles\$" ||
        say_fail "$name: report header: $(head -1 "$dir/report")"
    grep ' thread [0-9]* "' "$dir/tree" | sed 's/.*\(thread .*\)/\1/' > "$dir/tree.threads"
    printf '%s\n' 'thread 1 "main" (pid 0)' 'thread 2 "sensor" (pid 0)' 'thread 3 "filter" (pid 0)' \
        'thread 4 "logger" (pid 0)' > "$dir/want.threads"
    cmp -s "$dir/tree.threads" "$dir/want.threads" || say_fail "$name: tree's threads: $(cat "$dir/tree.threads")"
    "$NP" replay "$dir/trace" 2>&1 | grep '^# thread' | sort -u | sed 's/^# //' > "$dir/replay.threads"
    cmp -s "$dir/replay.threads" "$dir/want.threads" || say_fail "$name: replay's threads: $(cat "$dir/replay.threads")"
    # the flame graph: one frame per thread, "pid/tid name" (main's one
    # call is too narrow to draw)
    if "$NP" flame "$dir/trace" -o "$dir/flame.svg" 2> "$dir/flame.err"; then
        got=$(grep -o '<title>0/[0-9]* [a-z]* ' "$dir/flame.svg" | sed 's/<title>//; s/ $//' | sort | tr '\n' ' ')
        [ "$got" = "0/2 sensor 0/3 filter 0/4 logger " ] || say_fail "$name: flame's threads: $got"
    else
        say_fail "$name: flame: $(cat "$dir/flame.err")"
    fi
    if "$NP" dump --format=chrome "$dir/trace" -o "$dir/chrome.json" 2> "$dir/chrome.err"; then
        got=$(jq -r '[.traceEvents[] | select(.ph == "M" and .name == "thread_name") | "\(.tid)=\(.args.name)"] | join(" ")' \
            "$dir/chrome.json")
        [ "$got" = "1=main 2=sensor 3=filter 4=logger" ] || say_fail "$name: chrome thread_name: $got"
        # sched_pick's calls per task in the Chrome trace: its "B" events by thread
        got=$(jq -r '[.traceEvents[] | select(.ph == "B" and .name == "sched_pick") | .tid] | group_by(.)
              | map("\(.[0])=\(length)") | join(" ")' "$dir/chrome.json")
        want="1=1" tid=2
        for t in sensor filter logger; do
            want="$want $tid=$(grep -a "^out $t " "$dir/capture" | cut -d' ' -f3)"
            tid=$((tid + 1))
        done
        [ "$got" = "$want" ] || say_fail "$name: chrome: sched_pick per thread $got, want $want"
    else
        say_fail "$name: dump --format=chrome: $(cat "$dir/chrome.err")"
    fi
    # the calls: each task's work, and one sched_pick per switch
    for kv in sample=6 smooth=4 log_line=3 sched_pick=$picks; do
        got=$(calls "${kv%=*}" "$dir/report")
        [ "$got" = "${kv#*=}" ] || say_fail "$name: ${kv%=*}: $got calls, want ${kv#*=}"
    done
    # per task: its sched_pick calls are the times it switched out
    tree_sum sched_pick 1 "$dir/tree" > "$dir/picks.got"
    { echo "main: 1"; for t in sensor filter logger; do
        echo "$t: $(grep -a "^out $t " "$dir/capture" | cut -d' ' -f3)"; done; } > "$dir/picks.want"
    cmp -s "$dir/picks.got" "$dir/picks.want" || say_fail "$name: sched_pick per task: $(cat "$dir/picks.got")"
    # sched_pick is the scheduler's own few instructions: well under a slice
    max=$(awk '$NF == "sched_pick" { print $(NF-2) }' "$dir/report")
    [ "$max" -lt 200 ] || say_fail "$name: sched_pick lasts up to $max cycles"
    # the capture as it is, given the ELF: the same rows
    if "$NP" report "$dir/capture" --elf "$dir/fw.elf" > "$dir/direct" 2> "$dir/direct.err"; then
        tail -n +2 "$dir/report" > "$dir/report.rows"
        tail -n +2 "$dir/direct" > "$dir/direct.rows"
        [ ! -s "$dir/direct.err" ] && cmp -s "$dir/report.rows" "$dir/direct.rows" ||
            say_fail "$name: report --elf differs: $(cat "$dir/direct.err"; diff "$dir/report" "$dir/direct")"
    else
        say_fail "$name: report --elf: $(cat "$dir/direct.err")"
    fi
    [ $fail = 0 ] && echo "ok: $name ($cpu): tasks named in every view, sched_pick once per switch"

    # ---- the switch inside an instrumented function: why it must not be ----
    dir=$TMP/inside-$name
    if ! fw_build "$dir" $cpu $ld $RING -DTC_CPU_HZ=${hz}u -DSWITCH_INSIDE $fw; then
        say_fail "$name: build -DSWITCH_INSIDE"
        continue
    fi
    # each task's first return from sched_pick, which switched to it, has
    # no call in that task's stream: said, not counted
    run "$dir" "$name" "3 returns without their call in the trace, in 3 threads: they began before the \
thread's recording (at a fork, a task's first switch, np_trace_init) and are not counted" || continue
    picks=$(grep -a '^picks ' "$dir/capture" | cut -d' ' -f2)
    [ "$(calls sched_pick "$dir/report")" = "$picks" ] ||
        say_fail "$name: inside: sched_pick $(calls sched_pick "$dir/report") calls, want $picks"
    # a slice is a SysTick period (100 us) in cycles; in each task,
    # sched_pick lasts from the task's switch out to its switch back in:
    # the two other tasks' slices (the last, still open when the trace
    # ends, lasts 0)
    slice=$((hz / 10000))
    "$NP" replay "$dir/trace" > "$dir/replay" 2>&1 || say_fail "$name: inside: replay: $(cat "$dir/replay")"
    for t in sensor filter logger; do
        out=$(grep -a "^out $t " "$dir/capture" | cut -d' ' -f3)
        got=$(awk -v t="\"$t\"" -v lo=$((2 * slice)) -v hi=$((2 * slice + slice / 10)) '
            /^# thread/ { mine = $4 == t; next }
            mine && $NF == "sched_pick" { if ($2 >= lo && $2 <= hi) n++; else if ($2 != 0) bad++ }
            END { print n + 0, bad + 0 }' "$dir/replay")
        [ "${got#* }" = 0 ] && [ "${got% *}" -ge $((out - 1)) ] ||
            say_fail "$name: inside: $t: $got of its $out sched_pick calls (in, not) two slices of $slice cycles"
    done
    [ $fail = 0 ] && echo "ok: $name ($cpu): the switch inside sched_pick makes it last the other tasks' slices"

    # ---- PendSV as a naked C function, as FreeRTOS's ARMv7-M ports ----------
    [ $cpu = cortex-m0 ] && continue
    dir=$TMP/naked-$name
    if fw_build "$dir" $cpu $ld $RING -DTC_CPU_HZ=${hz}u -DNAKED_PENDSV=1 $fw; then
        run "$dir" "$name" && [ "$(calls sched_pick "$dir/report")" = "$(grep -a '^picks ' "$dir/capture" | cut -d' ' -f2)" ] ||
            say_fail "$name: naked PendSV, not instrumented: does not switch as the assembly one"
    else
        say_fail "$name: build -DNAKED_PENDSV=1"
    fi
    # instrumented: the hook is called before anything is saved (lr, which
    # holds EXC_RETURN, kept in r4, the task's own r4, and no push), and
    # the handler's bx lr is then no exception return: the run fails
    dir=$TMP/naked-hooked-$name
    if fw_build "$dir" $cpu $ld $RING -DTC_CPU_HZ=${hz}u -DNAKED_PENDSV=2 $fw; then
        "${CC%gcc}objdump" -d "$dir/fw.elf" 2> /dev/null |
            awk '/<PendSV_Handler>:$/ { on = 1; next } on && /mrs.*(psp|PSP)/ { exit } on { print }' > "$dir/head"
        if ! grep -q 'mov[[:space:]]*r4, lr' "$dir/head" || ! grep -q 'bl[[:space:]].*<__cyg_profile_func_enter>' "$dir/head" ||
            grep -q 'push\|stmdb' "$dir/head"; then
            say_fail "$name: naked PendSV, instrumented: not a hook call before the save: $(cat "$dir/head")"
        fi
        timeout 30 "$QEMU" -M "$name" -icount shift=0 -nographic -monitor none -serial none \
            -semihosting-config enable=on,target=native -kernel "$dir/fw.elf" > "$dir/capture" 2>&1
        rc=$?
        if [ $rc = 0 ] || grep -aqx PASSED "$dir/capture"; then
            say_fail "$name: naked PendSV, instrumented: the firmware ran (exit status $rc)"
        fi
        [ $fail = 0 ] &&
            echo "ok: $name ($cpu): naked PendSV instrumented: hook before the save, the firmware fails (exit status $rc)"
    else
        say_fail "$name: build -DNAKED_PENDSV=2"
    fi
done
exit $fail
