#!/bin/sh
# test_qemu_log.sh - QEMU's execution log as a source: Cortex-M firmware
# (tests/firmware/cortex_m) run by qemu-system-arm, its calls rebuilt from
# the log by `nanoprof import --qemu-log` and by every view given --elf.
# Exact call counts (expected/cm_calls.calls; the SysTick and IRQ counts
# the firmware prints) on a Cortex-M0, M3 and M4 from three logs of the
# same run (a block per instruction, whole blocks, whole blocks with the
# registers), which must also agree on every instruction; handlers nested
# under what they interrupted, an IRQ nested in the handler it preempts;
# a jump table's jumps no calls; two tasks a PendSV switches, each its own
# thread (expected/cm_tasks.calls), with and without registers; the calls
# counting hooks in the same binary give; `nanoprof emu --qemu BOARD`;
# bad input.
#
#   sh test_qemu_log.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
np=$build/src/nanoprof
fw=$build/tests/firmware
expected=$here/firmware/expected
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_qemu_log.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
export LC_ALL=C

# qemu BOARD ELF LOG FLAGS...: ELF run on BOARD, its log (-d FLAGS) in
# LOG, its output in LOG.out
qemu() {
    q_board=$1 q_elf=$2 q_log=$3
    shift 3
    timeout 600 qemu-system-arm -M "$q_board" -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$q_elf" "$@" -D "$q_log" >"$q_log.out" 2>&1 ||
        fail "qemu $q_board $*: exit status $? ($(head -3 "$q_log.out"))"
}

# counts LOG_OR_TRACE ELF|"" [REPORT OPTIONS...]: "function calls" lines,
# but libgcc's (a Cortex-M0 divides by calls)
counts() {
    c_in=$1 c_elf=$2
    shift 2
    "$np" report --format=csv ${c_elf:+--elf "$c_elf"} "$@" "$c_in" 2>/dev/null |
        awk -F, 'NR > 1 && $2 > 0 && $1 !~ /^__/ { print $1, $2 }' | sort
}

# tasks TRACE: TRACE's calls of the tasks' functions per thread against
# expected/cm_tasks.calls
tasks() {
    : >"$tmp/got"
    for tid in 2 3; do
        counts "$1" "" --tid=$tid | grep "^task_\|^work_\|^put_uint \|^cm_exit " | sed "s/^/$tid /" >>"$tmp/got"
    done
    sort "$tmp/got" | diff "$expected/cm_tasks.calls" - >"$tmp/diff"
}

# import LOG ELF: the trace in LOG.trace, the summary line in LOG.err;
# prints the instruction count it gives
import() {
    "$np" import --qemu-log "$1" --elf "$2" -o "$1.trace" 2>"$1.err" || fail "import $1: exit status $?"
    sed -n 's/.* \([0-9][0-9]*\) instructions in .*/\1/p' "$1.err"
}

# ---- calls, SysTick and svc: three logs of a run, on two CPUs ----
for c in "microbit cm_calls_m0" "mps2-an385 cm_calls_m3" "mps2-an386 cm_calls_m4"; do
    board=${c% *} name=${c#* }
    elf=$fw/$name.elf
    insns=""
    for mode in one block cpu; do
        log=$tmp/$name.$mode.log
        case $mode in
        one) qemu "$board" "$elf" "$log" -d exec,nochain -singlestep ;;
        block) qemu "$board" "$elf" "$log" -d exec,nochain ;;
        cpu) qemu "$board" "$elf" "$log" -d exec,cpu,nochain ;;
        esac
        ticks=$(sed -n 's/^ticks=\([0-9]*\)$/\1/p' "$log.out")
        [ -n "$ticks" ] && [ "$ticks" -gt 20 ] || fail "$name $mode: the firmware counted ${ticks:-no} ticks"
        grep -qx "svcs=10" "$log.out" || fail "$name $mode: the firmware's svc count: $(cat "$log.out")"
        irqs=$(sed -n 's/^irqs=\([0-9]*\)$/\1/p' "$log.out")
        [ -n "$irqs" ] && [ "$irqs" -eq $((ticks / 4)) ] || fail "$name $mode: the firmware counted ${irqs:-no} IRQs"
        sed "s/TICKS/$ticks/; s/IRQS/$irqs/" "$expected/cm_calls.calls" | sort >"$tmp/expected"
        # every view reads the log itself
        counts "$log" "$elf" | diff "$tmp/expected" - >"$tmp/diff" ||
            { fail "$name $mode: call counts from the log differ:"; cat "$tmp/diff"; }
        "$np" report --elf "$elf" "$log" >/dev/null 2>"$tmp/report.err" || fail "$name $mode: report: exit status $?"
        [ -s "$tmp/report.err" ] && fail "$name $mode: report warns: $(cat "$tmp/report.err")"
        # and the imported trace is the same
        n=$(import "$log" "$elf")
        counts "$log.trace" "" | diff "$tmp/expected" - >"$tmp/diff" ||
            { fail "$name $mode: call counts of the imported trace differ:"; cat "$tmp/diff"; }
        grep -q "exceptions (0 tail-chained), into" "$log.err" || fail "$name $mode: import's line: $(cat "$log.err")"
        grep -q "warning" "$log.err" && fail "$name $mode: import warns: $(cat "$log.err")"
        # a block per instruction: as many instructions as blocks
        if [ $mode = one ]; then
            grep -q " $n instructions in $n blocks" "$log.err" ||
                fail "$name: single-instruction blocks are not one instruction each: $(cat "$log.err")"
        fi
        [ -z "$insns" ] || [ "$n" = "$insns" ] || fail "$name $mode: $n instructions, the other logs $insns"
        insns=$n
        # handlers nested under what they interrupted, their own calls
        # under them; a jump table jumps
        "$np" dump --format=folded -o "$tmp/folded" "$log.trace" 2>/dev/null || fail "$name $mode: folded"
        grep "tick_work" "$tmp/folded" | grep -v "systick_handler;tick_work " >"$tmp/bad"
        [ -s "$tmp/bad" ] && fail "$name $mode: tick_work outside systick_handler: $(head -2 "$tmp/bad")"
        grep "_handler" "$tmp/folded" | grep -v "^main;" >"$tmp/bad"
        [ -s "$tmp/bad" ] && fail "$name $mode: a handler not under main: $(head -2 "$tmp/bad")"
        grep -q "^main;svc_handler;svc_work " "$tmp/folded" || fail "$name $mode: no main;svc_handler;svc_work"
        # IRQ 0 preempts SysTick's handler, which pended it
        grep "irq0_handler" "$tmp/folded" | grep -v "systick_handler;irq0_handler" >"$tmp/bad"
        [ -s "$tmp/bad" ] && fail "$name $mode: irq0_handler not under systick_handler: $(head -2 "$tmp/bad")"
        grep -q "systick_handler;irq0_handler;irq_work " "$tmp/folded" || fail "$name $mode: no nested IRQ"
        grep -q "^main;outer;middle;leaf " "$tmp/folded" || fail "$name $mode: no main;outer;middle;leaf"
        grep "pick;" "$tmp/folded" | grep -v "pick;systick_handler" >"$tmp/bad"
        [ -s "$tmp/bad" ] && fail "$name $mode: pick's jump table made calls: $(head -2 "$tmp/bad")"
    done
done

# ---- the calls the functions counted themselves: -finstrument-functions
# hooks in the same binary (no inlining) against its QEMU log ----
elf=$fw/cm_hooks.elf
for mode in block one; do
    log=$tmp/hooks.$mode.log
    case $mode in
    block) qemu mps2-an385 "$elf" "$log" -d exec,nochain ;;
    one) qemu mps2-an385 "$elf" "$log" -d exec,nochain -singlestep ;;
    esac
    grep -qx "hooks dropped 0" "$log.out" || fail "hooks $mode: $(tail -3 "$log.out")"
    sed -n 's/^hook 0x\([0-9a-f]*\) \([0-9]*\)$/\1 \2/p' "$log.out" | while read -r a n; do
        echo "$(arm-none-eabi-addr2line -f -e "$elf" "0x$a" | head -1) $n"
    done | sort >"$tmp/hooks.counts"
    counts "$log" "$elf" >"$tmp/log.counts"
    join -a1 -e0 -o 0,1.2,2.2 "$tmp/hooks.counts" "$tmp/log.counts" | awk '$2 != $3' >"$tmp/differ"
    n=$(wc -l <"$tmp/hooks.counts")
    [ "$n" -eq 14 ] || fail "hooks $mode: not the 14 functions of cm.c counted: $(cat "$tmp/hooks.counts")"
    [ -s "$tmp/differ" ] && fail "hooks $mode: functions whose calls differ (function, hooks, log): $(cat "$tmp/differ")"
    echo "test_qemu_log: hooks against the QEMU log ($mode): $n functions, $(wc -l <"$tmp/differ") differ"
done

# ---- two tasks a PendSV switches: a thread each ----
for mode in block cpu; do
    log=$tmp/tasks.$mode.log
    elf=$fw/cm_tasks.elf
    case $mode in
    block) qemu mps2-an385 "$elf" "$log" -d exec,nochain ;;
    cpu) qemu mps2-an385 "$elf" "$log" -d exec,cpu,nochain ;;
    esac
    grep -q "^ticks=" "$log.out" || fail "tasks $mode: the firmware did not end: $(cat "$log.out")"
    import "$log" "$elf" >/dev/null
    grep -q " of 3 threads," "$log.err" || fail "tasks $mode: not 3 threads: $(cat "$log.err")"
    tasks "$log.trace" || { fail "tasks $mode: counts per thread differ:"; cat "$tmp/diff"; }
    "$np" tree "$log.trace" >"$tmp/tree" 2>"$tmp/tree.err"
    grep -q 'thread 2 "task_a"' "$tmp/tree" && grep -q 'thread 3 "task_b"' "$tmp/tree" ||
        fail "tasks $mode: threads not named for their tasks: $(grep thread "$tmp/tree")"
    [ -s "$tmp/tree.err" ] && fail "tasks $mode: tree warns: $(cat "$tmp/tree.err")"
    # the switch's time is the other task's: excluded, a PendSV is short
    "$np" report --format=csv --exclude-switched "$log.trace" 2>/dev/null |
        awk -F, '$1 == "pendsv_handler" && $3 / $2 > 20 { bad = 1 } END { exit bad }' ||
        fail "tasks $mode: pendsv_handler keeps the other task's time with --exclude-switched"
done

# ---- nanoprof emu --qemu BOARD: QEMU run and its log read as it comes ----
"$np" emu --qemu mps2-an385 -o "$tmp/emu" --report "$fw/cm_calls_m3.elf" >"$tmp/emu.out" 2>"$tmp/emu.err" ||
    fail "emu --qemu: exit status $? ($(cat "$tmp/emu.err"))"
ticks=$(sed -n 's/^ticks=\([0-9]*\)$/\1/p' "$tmp/emu.out")
irqs=$(sed -n 's/^irqs=\([0-9]*\)$/\1/p' "$tmp/emu.out")
sed "s/TICKS/${ticks:-none}/; s/IRQS/${irqs:-none}/" "$expected/cm_calls.calls" | sort >"$tmp/expected"
counts "$tmp/emu" "" | diff "$tmp/expected" - >"$tmp/diff" || { fail "emu --qemu: call counts differ:"; cat "$tmp/diff"; }
grep -q "exited with 0 on QEMU's mps2-an385 after [0-9]* instructions; [0-9]* calls in 1 thread" "$tmp/emu.err" ||
    fail "emu --qemu: its line: $(cat "$tmp/emu.err")"
awk '$NF == "fib" && $5 == 465 { ok = 1 } END { exit !ok }' "$tmp/emu.err" ||
    fail "emu --qemu --report: no fib row of 465 calls: $(grep -e "incl" -e fib "$tmp/emu.err")"
"$np" emu --qemu mps2-an385 -o "$tmp/emu_tasks" "$fw/cm_tasks.elf" >/dev/null 2>"$tmp/emu.err" ||
    fail "emu --qemu, tasks: exit status $? ($(cat "$tmp/emu.err"))"
tasks "$tmp/emu_tasks" || { fail "emu --qemu, tasks: counts per thread differ:"; cat "$tmp/diff"; }
"$np" emu --qemu no-such-board -o "$tmp/noboard" "$fw/cm_calls_m3.elf" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "QEMU ran no instruction" "$tmp/err" && [ ! -e "$tmp/noboard" ] ||
    fail "emu --qemu, no such board: $(cat "$tmp/err")"
QEMU_SYSTEM_ARM=/no/qemu "$np" emu --qemu mps2-an385 -o "$tmp/noqemu" "$fw/cm_calls_m3.elf" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "/no/qemu: not found" "$tmp/err" || fail "emu --qemu, no QEMU: $(cat "$tmp/err")"
"$np" emu --qemu mps2-an385 --irq-every 100 "$fw/cm_calls_m3.elf" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "irq-every is the interpreter's" "$tmp/err" || fail "emu --qemu --irq-every: $(cat "$tmp/err")"

# a fault whose handler loops for good ends the run, said; so does the
# instruction limit
"$np" emu --qemu mps2-an385 -o "$tmp/fault" "$fw/cm_fault.elf" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "emu --qemu, a fault: not exit 1"
grep -q "error: the firmware faulted: HardFault in the block at 0x[0-9a-f]* in jump_to; its handler loops at 0x[0-9a-f]* in hardfault_handler$" "$tmp/err" ||
    fail "emu --qemu, a fault: $(cat "$tmp/err")"
[ "$(counts "$tmp/fault" "" | awk '$1 == "spin" || $1 == "jump_to" || $1 == "hardfault_handler"' | tr '\n' ' ')" = "hardfault_handler 1 jump_to 1 spin 1 " ] ||
    fail "emu --qemu, a fault: calls $(counts "$tmp/fault" "" | tr '\n' ' ')"
timeout 5 qemu-system-arm -M mps2-an385 -icount shift=0 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$fw/cm_fault.elf" -d exec,nochain -D "$tmp/fault.log" >/dev/null 2>&1
"$np" import --qemu-log "$tmp/fault.log" --elf "$fw/cm_fault.elf" -o "$tmp/fault.trace" 2>"$tmp/err" ||
    fail "import of a fault's log: $(cat "$tmp/err")"
grep -q "note: the firmware faulted: HardFault" "$tmp/err" || fail "import of a fault's log: $(cat "$tmp/err")"
# a fault in the fault handler: QEMU aborts at the lockup, which is said
"$np" emu --qemu mps2-an385 -o "$tmp/double" "$fw/cm_double_fault.elf" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "^nanoprof emu: qemu-system-arm ended by signal 6 (Aborted), its message above; the log is cut short: it ends at 0x[0-9a-f]* in jump_to" "$tmp/err" ||
    fail "emu --qemu, a double fault: $(tail -2 "$tmp/err")"
[ "$(counts "$tmp/double" "" | awk '$1 == "hardfault_handler"')" = "hardfault_handler 1" ] ||
    fail "emu --qemu, a double fault: calls $(counts "$tmp/double" "" | tr '\n' ' ')"
"$np" emu --qemu mps2-an385 --max-insns 5000 -o "$tmp/limit" "$fw/cm_calls_m3.elf" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "error: still running after [0-9]* instructions (the limit: --max-insns), at 0x" "$tmp/err" ||
    fail "emu --qemu --max-insns: $(cat "$tmp/err")"
n=$(sed -n 's/.* after \([0-9]*\) instructions;.*/\1/p' "$tmp/err")
[ -n "$n" ] && [ "$n" -ge 5000 ] && [ "$n" -lt 5700 ] || fail "emu --qemu --max-insns 5000: stopped after ${n:-?}"

# ---- bad input: one line, a non-zero exit, nothing written ----
elf=$fw/cm_calls_m3.elf
log=$tmp/cm_calls_m3.block.log
"$np" import --qemu-log "$log" --elf "$fw/cm_tasks.elf" -o "$tmp/wrong" 2>"$tmp/err"
[ $? -eq 1 ] || fail "wrong ELF: not exit 1"
grep -q "is not a run of .*cm_tasks.elf: QEMU ran" "$tmp/err" || fail "wrong ELF: $(cat "$tmp/err")"
[ -e "$tmp/wrong" ] && fail "wrong ELF: a trace was written"
"$np" report --elf "$fw/cm_tasks.elf" "$log" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "report, wrong ELF: $(cat "$tmp/err")"
printf 'nothing\nhere\n' >"$tmp/empty.log"
"$np" import --qemu-log "$tmp/empty.log" --elf "$elf" -o "$tmp/empty" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "no block QEMU ran" "$tmp/err" || fail "a log of no block: $(cat "$tmp/err")"
"$np" import --qemu-log "$tmp/missing.log" --elf "$elf" -o "$tmp/missing" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "missing.log" "$tmp/err" || fail "a missing log: $(cat "$tmp/err")"
"$np" report "$log" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "is QEMU's execution log: give its firmware's ELF (--elf FILE)" "$tmp/err" ||
    fail "report of a log without --elf: $(cat "$tmp/err")"
"$np" import --qemu-log "$log" -o "$tmp/noelf" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "elf" "$tmp/err" || fail "import without --elf: $(cat "$tmp/err")"
"$np" import --qemu-log "$log" --elf "$elf" "$log" 2>"$tmp/err"
[ $? -eq 2 ] || fail "import of a log and a capture: $(cat "$tmp/err")"
"$np" report --elf "$elf" --clock=25M "$log" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "counts instructions" "$tmp/err" || fail "--clock on a log: $(cat "$tmp/err")"
"$np" import --qemu-log "$log" --elf "$here/firmware/cortex_m/cm.c" -o "$tmp/notelf" 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "cm.c" "$tmp/err" || fail "an ELF that is not: $(cat "$tmp/err")"
# a log cut short (QEMU killed, the file cut in a line or between two):
# said in one line, exit 1, and what it holds imported, the calls still
# open closed at its end; a view says it and shows them
for cut in line block; do
    head -c $(($(wc -c <"$log") / 2)) "$log" >"$tmp/cut.log"
    [ $cut = block ] && sed -i '$d' "$tmp/cut.log"
    "$np" import --qemu-log "$tmp/cut.log" --elf "$elf" -o "$tmp/cut" 2>"$tmp/err"
    [ $? -eq 1 ] && grep -q "nanoprof import: the log is cut short: it ends at 0x[0-9a-f]* in " "$tmp/err" ||
        fail "a log cut in a $cut: $(cat "$tmp/err")"
    n=$(counts "$tmp/cut" "" | awk '$1 == "fib" { print $2 }')
    [ "$n" = 465 ] || fail "a log cut in a $cut: fib called ${n:-no} times, not 465"
    rm -rf "$tmp/cut"
    "$np" report --elf "$elf" "$tmp/cut.log" >"$tmp/out" 2>"$tmp/err" || fail "report of a cut log: exit status $?"
    grep -q "warning: the log is cut short" "$tmp/err" && grep -q " fib$" "$tmp/out" ||
        fail "report of a log cut in a $cut: $(cat "$tmp/err")"
done

[ $failures -eq 0 ] && echo "test_qemu_log: all passed"
[ $failures -eq 0 ]
