#!/bin/sh
# test_emu_cortex_m.sh - `nanoprof emu` running Cortex-M firmware
# (tests/firmware/cortex_m) on its own CPU: exact call counts on a
# Cortex-M0, M3 and M4 (expected/cm_calls.calls with the SysTick and IRQ
# counts the firmware prints), an IRQ nested under the SysTick handler it
# preempts; two tasks a PendSV switches, each its own named thread
# (expected/cm_tasks.calls), and with --rtos freertos named as their
# FreeRTOS-shaped TCBs name them; the calls counting hooks in the same run
# saw; the same ELF's output and exit status in qemu-system-arm, and the
# same calls from QEMU's execution log; the DWT cycle counter against the
# cycle model and the trace; --args and --retval (fib's, at every call);
# faults said in one line; bad input.
#
#   sh test_emu_cortex_m.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
np=$build/src/nanoprof
np_cmd=emu
fw=$build/tests/firmware
expected=$here/firmware/expected
. "$here/cli_test.sh"
export LC_ALL=C
need qemu-system-arm arm-none-eabi-addr2line arm-none-eabi-objcopy jq

# counts TRACE [REPORT OPTIONS...]: "function calls" lines, but libgcc's
counts() {
    c_in=$1
    shift
    "$np" report --format=csv "$@" "$c_in" 2>/dev/null |
        awk -F, 'NR > 1 && $2 > 0 && $1 !~ /^__/ { print $1, $2 }' | sort
}
# The firmware's console is semihosting's SYS_WRITE0, on stderr (as
# QEMU has it): its lines come before the command's last one.
# printed NAME: the value the firmware printed as NAME=value
printed() { sed -n "s/^$1=\([0-9]*\)$/\1/p" "$tmp/err"; }
# ends NAME WANT NEEDLE: $rc is WANT and the last line on stderr holds NEEDLE
ends() {
    if [ "$rc" = "$2" ] && tail -1 "$tmp/err" | grep -q -- "$3"; then
        ok "$1"
    else
        bad "$1: exit $rc, want $2 and a last line with '$3', got:"; tail -3 "$tmp/err"
    fi
}

# ---- calls, SysTick, a nested IRQ and svc on each CPU ----
for c in "m0 mps2-an385 Cortex-M3" "m3 mps2-an385 Cortex-M3" "m4 mps2-an386 Cortex-M4" "m0 generic Cortex-M0"; do
    set -- $c
    run --board "$2" -o "$tmp/calls_$1_$2" "$fw/cm_calls_emu_$1.elf"
    cp "$tmp/err" "$tmp/calls_$1_$2.err"
    ends "cm_calls_emu_$1 on $2: exit 0" 0 "exited with 0 after [0-9]* instructions, [0-9]* cycles ($3); [0-9]* calls in 1 thread"
    sed "s/TICKS/$(printed ticks)/; s/IRQS/$(printed irqs)/" "$expected/cm_calls.calls" | sort >"$tmp/want"
    counts "$tmp/calls_$1_$2" >"$tmp/got"
    same_files "cm_calls_emu_$1 on $2: every function's calls" "$tmp/want" "$tmp/got"
    [ "$(printed ticks)" -gt 100 ] && [ "$(printed svcs)" = 10 ] && ok "$1 on $2: ticks and svcs" ||
        bad "$1 on $2: $(cat "$tmp/err")"
done
# handlers under what they interrupted: IRQ 0 always under the SysTick
# handler that pends it (it preempts there), svc_work under svc_handler
irqs=$(sed -n 's/^irqs=//p' "$tmp/calls_m3_mps2-an385.err")
"$np" graph "$tmp/calls_m3_mps2-an385" irq0_handler 2>/dev/null | awk 'NF && $1 !~ /^[#\[-]|^index/' >"$tmp/arcs"
printf '%s\n' "$irqs/$irqs systick_handler" "$irqs/$irqs irq_work" >"$tmp/want"
awk '{ print $(NF - 2), $(NF - 1) }' "$tmp/arcs" >"$tmp/got"
same_files "graph: irq0_handler's only caller is systick_handler, its only callee irq_work" "$tmp/want" "$tmp/got"
"$np" graph "$tmp/calls_m3_mps2-an385" svc_work 2>/dev/null | grep -q ' 10/10 *svc_handler \[' &&
    ok "graph: svc_handler calls svc_work 10 times" || bad "graph: $("$np" graph "$tmp/calls_m3_mps2-an385" svc_work 2>&1)"

# ---- two tasks a PendSV switches: a thread each, named for them ----
run --board mps2-an385 -o "$tmp/tasks" "$fw/cm_tasks_emu.elf"
ends "cm_tasks_emu: exit 0" 0 "calls in 3 threads"
: >"$tmp/got"
for tid in 2 3; do
    counts "$tmp/tasks" --tid=$tid | grep "^task_\|^work_\|^put_uint \|^cm_exit " | sed "s/^/$tid /" >>"$tmp/got"
done
sort "$tmp/got" >"$tmp/got.sorted"
same_files "cm_tasks_emu: calls per thread" "$expected/cm_tasks.calls" "$tmp/got.sorted"
"$np" tree "$tmp/tasks" >"$tmp/tree" 2>&1
grep -q 'thread 2 "task_a"' "$tmp/tree" && grep -q 'thread 3 "task_b"' "$tmp/tree" && ok "tasks: threads named" ||
    bad "tasks: $(grep thread "$tmp/tree")"
# the switch's time is the other task's: excluded, a PendSV is short
"$np" report --format=csv --exclude-switched "$tmp/tasks" 2>/dev/null |
    awk -F, '$1 == "pendsv_handler" { seen = 1; if ($3 / $2 > 300) bad = 1 } END { exit bad || !seen }' &&
    ok "tasks: pendsv_handler's cycles without the other task's" || bad "tasks: pendsv_handler keeps the other task's time"

# --rtos freertos: the names pxCurrentTCB->pcTaskName has when each task
# first runs (tasks.c: names no function has), the calls as before
run --board mps2-an385 --rtos freertos -o "$tmp/rtos" "$fw/cm_tasks_emu.elf"
ends "cm_tasks_emu --rtos freertos: exit 0" 0 "calls in 3 threads"
"$np" tree "$tmp/rtos" >"$tmp/tree" 2>&1
[ "$(grep -o 'thread [0-9]* "[^"]*"' "$tmp/tree" | tr '\n' ' ')" = 'thread 1 "main" thread 2 "Blinky" thread 3 "Logger" ' ] &&
    ok "--rtos freertos: threads named by their TCBs" || bad "--rtos freertos: $(grep thread "$tmp/tree")"
: >"$tmp/got"
for tid in 2 3; do
    counts "$tmp/rtos" --tid=$tid | grep "^task_\|^work_\|^put_uint \|^cm_exit " | sed "s/^/$tid /" >>"$tmp/got"
done
sort "$tmp/got" >"$tmp/got.sorted"
same_files "--rtos freertos: calls per thread" "$expected/cm_tasks.calls" "$tmp/got.sorted"
# what it needs of the ELF, said before the first instruction
run --board mps2-an385 --rtos freertos -o "$tmp/rtos_fib" "$fw/cm_fib.elf"
status "--rtos freertos: no kernel" 1 "nanoprof emu: --rtos freertos: .*cm_fib.elf has no pxCurrentTCB: not a FreeRTOS firmware$"
[ ! -e "$tmp/rtos_fib" ] && ok "--rtos freertos: no kernel: no trace" || bad "--rtos freertos: no kernel: a trace left"
arm-none-eabi-objcopy --strip-debug "$fw/cm_tasks_emu.elf" "$tmp/nodebug.elf"
run --board mps2-an385 --rtos freertos -o "$tmp/rtos_nodebug" "$tmp/nodebug.elf"
status "--rtos freertos: no debug information" 1 "nanoprof emu: --rtos freertos: .*nodebug.elf has no debug information for TCB_t: build it with -g$"
run --board mps2-an385 --rtos zephyr "$fw/cm_tasks_emu.elf"
status "--rtos: an unknown RTOS" 2 "unknown RTOS 'zephyr': freertos"
run --qemu mps2-an385 --rtos freertos "$fw/cm_tasks.elf"
status "--rtos with --qemu" 2 "rtos is the interpreter's: it does not apply with --qemu"

# ---- the hooks' own counts in the same run ----
run --board mps2-an385 -o "$tmp/hooks" "$fw/cm_hooks_emu.elf"
ends "cm_hooks_emu: exit 0" 0 "exited with 0"
grep -qx "hooks dropped 0" "$tmp/err" || bad "hooks: $(tail -3 "$tmp/err")"
sed -n 's/^hook 0x\([0-9a-f]*\) \([0-9]*\)$/\1 \2/p' "$tmp/err" | while read -r a n; do
    echo "$(arm-none-eabi-addr2line -f -e "$fw/cm_hooks_emu.elf" "0x$a" | head -1) $n"
done | sort >"$tmp/hooks.counts"
counts "$tmp/hooks" >"$tmp/emu.counts"
join -a1 -e0 -o 0,1.2,2.2 "$tmp/hooks.counts" "$tmp/emu.counts" | awk '$2 != $3' >"$tmp/differ"
n=$(wc -l <"$tmp/hooks.counts")
[ "$n" -eq 14 ] && [ ! -s "$tmp/differ" ] && ok "hooks: $n functions, none differs" ||
    bad "hooks: $n functions; differ (function, hooks, emu): $(cat "$tmp/differ")"
echo "test_emu_cortex_m: hooks against the emulator: $n functions, $(wc -l <"$tmp/differ") differ"

# ---- the same ELF in QEMU: output and exit status; its log's calls ----
timeout 600 qemu-system-arm -M mps2-an385 -icount shift=0 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$fw/cm_fib.elf" -d exec,nochain -D "$tmp/fib.log" \
    >"$tmp/qemu.out" 2>&1
qrc=$?
run --board mps2-an385 -o "$tmp/fib" "$fw/cm_fib.elf"
sed '$d' "$tmp/err" >"$tmp/console"
[ "$rc" = "$qrc" ] && same_files "cm_fib: output as in QEMU" "$tmp/qemu.out" "$tmp/console" || bad "cm_fib: exit $rc, QEMU's $qrc"
"$np" import --qemu-log "$tmp/fib.log" --elf "$fw/cm_fib.elf" -o "$tmp/fib.trace" 2>/dev/null
counts "$tmp/fib.trace" >"$tmp/qemu.counts"
counts "$tmp/fib" >"$tmp/emu.counts"
[ -s "$tmp/emu.counts" ] && same_files "cm_fib: the QEMU log's calls are the emulator's" "$tmp/qemu.counts" "$tmp/emu.counts"

# the same on the Cortex-M33 board, its memory where QEMU's an505 has it
timeout 600 qemu-system-arm -M mps2-an505 -icount shift=0 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$fw/cm_fib_an505.elf" >"$tmp/qemu.out" 2>&1
qrc=$?
run --board mps2-an505 -o "$tmp/fib505" "$fw/cm_fib_an505.elf"
sed '$d' "$tmp/err" >"$tmp/console"
ends "cm_fib_an505: on the Cortex-M33" 0 "exited with 0 after [0-9]* instructions, [0-9]* cycles (Cortex-M33)"
[ "$rc" = "$qrc" ] && same_files "cm_fib_an505: output as in QEMU's mps2-an505" "$tmp/qemu.out" "$tmp/console" ||
    bad "cm_fib_an505: exit $rc, QEMU's $qrc"

# ---- DWT: the firmware's own cycle counts ----
# dwt C WAIT WANT MORE: cm_cycles_C run with --wait WAIT prints the spans
# WANT, and its call of fib12 spans the trace's cycles of it plus MORE
dwt() {
    run --board mps2-an385 --wait "$2" -o "$tmp/cycles_$1_$2" "$fw/cm_cycles_$1.elf"
    ends "cm_cycles_$1 --wait $2: exit 0" 0 "exited with 0"
    got=$(for s in empty nop4 add8 ldr lit mul b; do printf '%s=%s ' $s "$(printed $s)"; done)
    [ "$got" = "$3" ] && ok "$1: DWT spans with --wait $2" || bad "$1: DWT spans with --wait $2: $got, want $3"
    span=$(printed call)
    own=$("$np" report --format=csv "$tmp/cycles_$1_$2" 2>/dev/null | awk -F, '$1 == "fib12" { print $3 }')
    [ -n "$span" ] && [ "$((span - $4))" = "${own%.*}" ] && ok "$1: --wait $2: span of fib12 = its cycles + $4" ||
        bad "$1: --wait $2: DWT span of fib12 $span, the trace's ${own:-none} + $4"
}
for c in m3 m4; do
    # each span: the first read (ldr, 2) and the sequence, by the TRM's
    # tables (P, the pipeline refill, taken as 2: docs/emulator.md); the
    # call's: the read and the bl beside the trace's cycles of it
    dwt $c 0,0 "empty=2 nop4=6 add8=10 ldr=4 lit=4 mul=3 b=5 " 5
    # flash wait states: 3 for a jump's fetch and a data read from flash
    # (the literal; DWT is not flash), none for straight-line code
    dwt $c 3,0 "empty=2 nop4=6 add8=10 ldr=4 lit=7 mul=3 b=8 " 8
    # and 2 for each word of straight-line code: the first read and 4 nops
    # (10 bytes) enter 2 or 3 words as they are aligned, with 8 adds 4 or 5
    run --board mps2-an385 --wait 0,2 -o "$tmp/cycles_s_$c" "$fw/cm_cycles_$c.elf"
    nop4=$(printed nop4) add8=$(printed add8)
    { [ "$nop4" = 10 ] || [ "$nop4" = 12 ]; } && { [ "$add8" = 18 ] || [ "$add8" = 20 ]; } &&
        ok "$c: --wait 0,2: straight-line fetches" || bad "$c: --wait 0,2: nop4=$nop4 add8=$add8"
done

# ---- tail-chaining and late arrival ----
for c in m0 m3 m4; do
    cpu=""
    window=12 # the cycles an entry stacks its frame in (docs/emulator.md)
    if [ $c = m0 ]; then cpu="--cpu cortex-m0" window=16; fi
    run $cpu --board mps2-an385 -o "$tmp/chain_$c" "$fw/cm_chain_$c.elf"
    ends "cm_chain_$c: exit 0" 0 "exited with 0"
    # SysTick due K cycles on, K = 0..47, around an svc: before it (B), while
    # the SVC's frame is stacked, taken in its place (L: exactly the entry's
    # cycles), in the SVC's handler (N), after it (A)
    late=$(sed -n 's/^late=//p' "$tmp/err")
    echo "$late" | grep -Eq "^-B+L{$window}N+A+$" && ok "cm_chain_$c: late arrival for the $window cycles of the entry" ||
        bad "cm_chain_$c: late=$late"
    # the tree agrees: SysTick under the SVC's handler once per N, under the
    # thread otherwise
    nested=$(printf '%s' "$late" | tr -cd N | wc -c)
    got=$(counts "$tmp/chain_$c" -F svc_handler | awk '$1 == "systick_handler" { print $2 }')
    all=$(counts "$tmp/chain_$c" | awk '$1 == "systick_handler" || $1 == "svc_handler" { printf "%s %s ", $1, $2 }')
    [ "${got:-0}" = "$nested" ] && [ "$all" = "svc_handler 48 systick_handler 47 " ] &&
        ok "cm_chain_$c: $nested SysTicks under svc_handler, 47 in all" ||
        bad "cm_chain_$c: ${got:-0} SysTicks under svc_handler for $nested N; $all"
    [ $c = m0 ] && continue
    # IRQ0's return tail-chained to PendSV: from IRQ0's last read of the
    # counter to PendSV's first, ldr 2 + ldr 2 + str 2 + bx 3, the chain's
    # 6, ldr 2 (a return and an entry would be 10 + 12)
    [ "$(printed irq_then_pendsv)" = 1 ] && [ "$(printed chain)" = 17 ] && ok "cm_chain_$c: tail-chaining in 6 cycles" ||
        bad "cm_chain_$c: IRQ0 then PendSV $(printed irq_then_pendsv), chain=$(printed chain), want 17"
done

# ---- the FP context on exceptions: lazy stacking (FPCCR.LSPEN), and at once ----
timeout 600 qemu-system-arm -M mps2-an386 -icount shift=0 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$fw/cm_fpu.elf" >"$tmp/qemu.out" 2>&1
qrc=$?
run --board mps2-an386 -o "$tmp/fpu" "$fw/cm_fpu.elf"
ends "cm_fpu: exit 0" 0 "exited with 0 after [0-9]* instructions, [0-9]* cycles (Cortex-M4)"
# FPCCR, FPCAR, the frame's s0 slot before and after the handler's FP
# instruction, s1 kept: as QEMU has them (its DWT counts nothing: the
# span_ lines aside)
grep -v '^span_' "$tmp/qemu.out" >"$tmp/qemu.fp"
sed '$d' "$tmp/err" | grep -v '^span_' >"$tmp/emu.fp"
[ "$qrc" = 0 ] && grep -q "^lazy_used_slot_marked_after=0$" "$tmp/emu.fp" &&
    same_files "cm_fpu: the FP frames as in QEMU's mps2-an386" "$tmp/qemu.fp" "$tmp/emu.fp" ||
    bad "cm_fpu: QEMU exit $qrc, or no lazy stacking seen: $(grep lazy_used "$tmp/emu.fp" | tr '\n' ' ')"
# the cycles: lazy stacking costs nothing until the handler's FP
# instruction; then, and with LSPEN clear, 17 to write and 17 to read the
# 17 words (docs/emulator.md)
nofp=$(printed span_nofp) lazy=$(printed span_lazy) used=$(printed span_lazy_used)
own=$(printed span_nofp_used) eager=$(printed span_eager)
[ -n "$nofp" ] && [ "$lazy" = "$nofp" ] && [ "$used" = "$((own + 34))" ] && [ "$eager" = "$((nofp + 34))" ] &&
    ok "cm_fpu: lazy stacking's cycles" ||
    bad "cm_fpu: spans nofp=$nofp lazy=$lazy lazy_used=$used nofp_used=$own eager=$eager"
[ "$(counts "$tmp/fpu" | awk '$1 == "svc_handler" { print $2 }')" = 5 ] && ok "cm_fpu: 5 svc_handler calls" ||
    bad "cm_fpu: svc_handler calls $(counts "$tmp/fpu" | grep svc_handler)"

# ---- faults: one line each, the trace up to there readable ----
run --board mps2-an385 -o "$tmp/fault" "$fw/cm_fault.elf"
ends "cm_fault: its handler loops" 1 "error: the firmware faulted: HardFault (a branch to an address with bit 0 clear) at 0x[0-9a-f]* in jump_to; its handler loops at 0x[0-9a-f]* in hardfault_handler$"
[ "$(counts "$tmp/fault" | awk '$1 == "spin" || $1 == "jump_to" || $1 == "hardfault_handler"' | tr '\n' ' ')" = "hardfault_handler 1 jump_to 1 spin 1 " ] &&
    ok "cm_fault: its calls" || bad "cm_fault: calls $(counts "$tmp/fault" | tr '\n' ' ')"
run --board mps2-an385 -o "$tmp/double" "$fw/cm_double_fault.elf"
ends "cm_double_fault: lockup" 1 "error: the CPU locked up: HardFault (a branch to an address with bit 0 clear) at 0x[0-9a-f]* in jump_to, in the HardFault handler$"

# ---- a wfi nothing will wake ends the run, said ----
run --board mps2-an385 -o "$tmp/sleep" "$fw/cm_sleep.elf"
ends "cm_sleep: halted asleep" 0 "halted asleep (wfi) with nothing to wake it at 0x[0-9a-f]* in main after"

# ---- --args and --retval: fib's argument and return value at every call
# (r0 at the bl, r0 at the return), through the saved trace: 150049 calls,
# each fib(n) returning the nth Fibonacci number; replay shows them ----
run --board mps2-an385 -o "$tmp/fibargs" --args 'fib@arg1' --retval 'fib@retval/u' "$fw/cm_fib.elf"
ends "--args, --retval: the run" 0 "exited with 0 after"
"$np" dump --format=chrome "$tmp/fibargs" | jq -c 'def fibs: reduce range(2; 25) as $i ([0, 1]; . + [.[$i - 1] + .[$i - 2]]);
    fibs as $f | [.traceEvents[] | select(.ph == "E" and .name == "fib")] |
    [length, (map(select(.args.retval != $f[.args.arg1])) | length), (map(.args.arg1) | max)]' >"$tmp/a" 2>&1
same "--args, --retval: every fib(n) = the nth Fibonacci number" "$tmp/a" "[150049,0,24]"
"$np" replay "$tmp/fibargs" | grep -m 2 -o 'fib(2[34]) {' >"$tmp/a"
same "--args: replay shows the arguments" "$tmp/a" "fib(24) {
fib(23) {"
"$np" replay "$tmp/fibargs" | grep -c '} = 46368 /\* fib \*/' >"$tmp/a"
same "--retval: replay shows the return value" "$tmp/a" "1"
run --board mps2-an385 -o "$tmp/badargs" --args 'nosuch@arg1' "$fw/cm_fib.elf"
status "--args naming no function" 1 "--args 'nosuch@arg1': 'nosuch' matches no function of the firmware"
[ ! -e "$tmp/badargs" ] && ok "--args naming no function: nothing written" || bad "--args naming no function: a trace"
run --board mps2-an385 --args 'fib@arg5' "$fw/cm_fib.elf"
status "--args arg5" 2 "arg5: ARM passes arguments 1 to 4 in registers"
run --qemu mps2-an385 --args 'fib@arg1' "$fw/cm_fib.elf"
status "--args with --qemu" 2 "--args is the interpreter's: it does not apply with --qemu"

# ---- bad input: one line, exit 1 (2 for usage) ----
run --board mps2-an385 "$fw/fib_arm.elf"
status "an ARM ELF on a board" 1 "built for ARMv4T (Tag_CPU_arch 2), not for a Cortex-M: --board is for Cortex-M firmware"
run --cpu cortex-m3 "$fw/fib_arm.elf"
status "an ARM ELF given a Cortex-M" 1 "not for a Cortex-M: --cpu Cortex-M3 runs Thumb code of the M profile only"
run --cpu arm7tdmi "$fw/cm_fib.elf"
status "a Cortex-M ELF given an ARM CPU" 1 "a Cortex-M: --cpu ARM7TDMI runs ARM code"
run --cpu cortex-m0 "$fw/cm_fib.elf"
status "an ARMv7-M ELF given a Cortex-M0" 1 "built for ARMv7-M (Tag_CPU_arch 10): Cortex-M0 does not run it, Cortex-M3 does"
# the FP attributes: a Cortex-M7's double-precision FPU refused, unless a
# CPU is given; FPv5 single precision runs on the M33
run --board mps2-an385 "$fw/cm_fib_m7_fpv5-d16.elf"
status "a double-precision FPU's firmware" 1 "built for ARMv7E-M with a double-precision FPU (Tag_FP_arch 8, a Cortex-M7's): the emulator's are single-precision; --cpu cortex-m33 runs it anyway"
run --board mps2-an385 --cpu cortex-m33 "$fw/cm_fib_m7_fpv5-d16.elf"
ends "the same with --cpu cortex-m33" 0 "exited with 0 after [0-9]* instructions, [0-9]* cycles (Cortex-M33)"
run --board mps2-an385 "$fw/cm_fib_m7_fpv5-sp-d16.elf"
ends "FPv5-SP firmware on the M33" 0 "exited with 0 after [0-9]* instructions, [0-9]* cycles (Cortex-M33)"
run --board mps2-an385 --cpu cortex-m4 "$fw/cm_fib_m7_fpv5-sp-d16.elf"
status "FPv5-SP firmware given a Cortex-M4" 1 "Cortex-M4 does not run it, Cortex-M33 does"
run --board no-such "$fw/cm_fib.elf"
status "an unknown board" 2 "unknown board 'no-such': mps2-an385, mps2-an386, mps2-an505 or generic"
run --irq-every 100 "$fw/cm_fib.elf"
status "--irq-every on a Cortex-M" 1 "irq-every is the ARM CPUs' virtual timer: a Cortex-M firmware has SysTick"
run --board mps2-an385 --ram 1M "$fw/cm_fib.elf"
status "--ram on a board" 1 "ram is for --board generic"
run "$fw/bad_cortex_m.elf"
status "no vector table" 1 "bad_cortex_m.elf: the reset vector"
finish
