#!/bin/sh
# test_emu_cli.sh - `nanoprof emu` on the test firmware (tests/firmware):
# exact call counts for every call and return form, ARM and Thumb, both
# CPUs; the calls closed by re-synchronisation; IRQ and SWI handlers;
# threads as roots; the calls counted by -finstrument-functions hooks in
# the firmware itself; a function's exact instruction count; the same
# trace from two runs; every view and exporter on an emulated profile
# (callgrind_annotate and arm-none-eabi-gprof read the exports); bad input.
#
#   sh test_emu_cli.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
np=$build/src/nanoprof
fw=$build/tests/firmware
expected=$here/firmware/expected
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_emu.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
export LC_ALL=C

# emu NAME [OPTIONS...]: runs firmware NAME into $tmp/NAME; stdout in
# $tmp/NAME.out, stderr in $tmp/NAME.err
emu() {
    name=$1
    shift
    "$np" emu -o "$tmp/$name" "$@" "$fw/$name.elf" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

# counts TRACE [REPORT OPTIONS...]: "function calls" lines, sorted
counts() {
    t=$1
    shift
    "$np" report --format=csv "$@" "$t" 2>/dev/null | awk -F, 'NR > 1 && $2 > 0 { print $1, $2 }' | sort
}

# ---- every call and return form: exact counts, the output unchanged
for case in "calls_arm calls_arm.calls calls.out" "calls_thumb calls_thumb.calls calls.out" \
    "calls_v5 calls_v5.calls calls_v5.out --cpu arm946e-s"; do
    set -- $case
    name=$1 calls=$2 out=$3
    shift 3
    emu "$name" "$@" || fail "$name: exit status $?: $(cat "$tmp/$name.err")"
    cmp -s "$tmp/$name.out" "$expected/$out" || fail "$name: its output differs from $out"
    counts "$tmp/$name" | diff "$expected/$calls" - >"$tmp/diff" || { fail "$name: call counts differ:"; cat "$tmp/diff"; }
    grep -q " 0 closed by\|re-synchronisation" "$tmp/$name.err" && fail "$name: calls re-synchronised: $(cat "$tmp/$name.err")"
done

# the instructions, and the cycles of the ARM7TDMI's model (docs/emulator.md),
# exactly: a change to either must be deliberate
emu calls_arm
grep -q "after 877 instructions, 1704 cycles (ARM7TDMI)" "$tmp/calls_arm.err" ||
    fail "calls_arm: not 877 instructions in 1704 cycles: $(cat "$tmp/calls_arm.err")"

# ---- re-synchronisation: the calls that missed their return, marked
emu resync || fail "resync: exit status $?"
counts "$tmp/resync" | diff "$expected/resync.calls" - >"$tmp/diff" || { fail "resync: call counts differ:"; cat "$tmp/diff"; }
"$np" report --format=csv "$tmp/resync" 2>/dev/null | awk -F, 'NR > 1 && $NF > 0 { print $1, $NF }' | sort |
    diff "$expected/resync.resync" - >"$tmp/diff" || { fail "resync: re-synchronised calls differ:"; cat "$tmp/diff"; }
grep -q "19 closed by re-synchronisation (marked (?))" "$tmp/resync.err" || fail "resync: closing line: $(cat "$tmp/resync.err")"
"$np" tree "$tmp/resync" >"$tmp/tree" 2>"$tmp/tree.err"
grep -q "rs_mid (?)" "$tmp/tree" || fail "resync: tree does not mark rs_mid (?)"
grep -q "19 calls closed by re-synchronisation" "$tmp/tree.err" || fail "resync: tree's warning: $(cat "$tmp/tree.err")"
"$np" graph "$tmp/resync" rs_mid >"$tmp/graph" 2>/dev/null
grep -q "rs_mid (?)" "$tmp/graph" || fail "resync: graph does not mark rs_mid (?)"
"$np" replay "$tmp/resync" >"$tmp/replay" 2>/dev/null
grep -q "(?)" "$tmp/replay" || fail "resync: replay does not mark (?)"
"$np" report --strict "$tmp/resync" >/dev/null 2>&1
[ $? -eq 3 ] || fail "resync: report --strict does not exit 3"

# ---- IRQ and SWI: the handlers' calls, one per exception taken
for cpu in arm7tdmi arm946e-s; do
    emu irq --cpu $cpu --irq-every=2000 || fail "irq ($cpu): exit status $?"
    n=$(sed -n 's/^irqs \([0-9]*\)$/\1/p' "$tmp/irq.out")
    [ -n "$n" ] && [ "$n" -gt 10 ] || fail "irq ($cpu): the firmware counted ${n:-no} IRQs"
    sed "s/IRQS/$n/" "$expected/irq.calls" | sort >"$tmp/irq.expected"
    counts "$tmp/irq" | diff "$tmp/irq.expected" - >"$tmp/diff" || { fail "irq ($cpu): call counts differ:"; cat "$tmp/diff"; }
done
# the handlers nested under what they interrupted: every stack with one
# starts at main
"$np" dump --format=folded -o "$tmp/irq.folded" "$tmp/irq" 2>/dev/null || fail "irq: folded"
grep -q "irq_handler;irq_service;irq_tick" "$tmp/irq.folded" || fail "irq: no irq_handler;irq_service;irq_tick stack"
grep "_handler" "$tmp/irq.folded" | grep -v "^main;" >"$tmp/irq.roots"
[ -s "$tmp/irq.roots" ] && fail "irq: handlers not under main: $(head -2 "$tmp/irq.roots")"
# --report: the flat profile, cycles and instructions, after the run
"$np" emu -o "$tmp/rep" --report --irq-every=2000 "$fw/irq.elf" >"$tmp/rep.out" 2>"$tmp/rep.err" || fail "emu --report"
n=$(sed -n 's/^irqs \([0-9]*\)$/\1/p' "$tmp/rep.out")
awk -v n="$n" '$NF == "irq_tick" && $5 == n { ok = 1 } END { exit !ok }' "$tmp/rep.err" ||
    fail "emu --report: no irq_tick row with $n calls: $(grep irq_tick "$tmp/rep.err")"
# as `nanoprof report` prints it: in cycles, then instructions
{ "$np" report "$tmp/rep" && echo && "$np" report --metric=count "$tmp/rep"; } >"$tmp/rep.expected" 2>&1 ||
    fail "report of emu --report's trace"
sed 1d "$tmp/rep.err" | diff "$tmp/rep.expected" - >"$tmp/rep.diff" ||
    fail "emu --report: not report's view: $(head -5 "$tmp/rep.diff")"
grep -q "^# .*, cycles$" "$tmp/rep.err" && grep -q "^# .*, instructions$" "$tmp/rep.err" ||
    fail "emu --report: no cycles and instructions headers"

# ---- threads: each its own root, counts per thread
emu threads --thread-switch=np_fw_switch || fail "threads: exit status $?"
cmp -s "$tmp/threads.out" "$expected/threads.out" || fail "threads: output differs"
: >"$tmp/threads.got"
for tid in 1 2 3 4; do
    counts "$tmp/threads" --tid=$tid | grep -v "^task_start " | sed "s/^/$((tid - 1)) /" >>"$tmp/threads.got"
done
sort "$tmp/threads.got" | diff "$expected/threads.calls" - >"$tmp/diff" || { fail "threads: counts per thread differ:"; cat "$tmp/diff"; }
grep -q "in 4 threads" "$tmp/threads.err" || fail "threads: $(cat "$tmp/threads.err")"
# without naming the switch function: the stacks tell the threads apart
emu threads || fail "threads (stacks): exit status $?"
: >"$tmp/threads.got"
for tid in 1 2 3 4; do
    counts "$tmp/threads" --tid=$tid | grep -v "^task_start " | sed "s/^/$((tid - 1)) /" >>"$tmp/threads.got"
done
sort "$tmp/threads.got" | diff "$expected/threads.calls" - >"$tmp/diff" || { fail "threads (stacks): counts per thread differ:"; cat "$tmp/diff"; }
"$np" tree "$tmp/threads" 2>/dev/null | grep -c '^ *[0-9].*thread [0-9]' >"$tmp/roots"
[ "$(cat "$tmp/roots")" = 4 ] || fail "threads: the tree has $(cat "$tmp/roots") thread roots, not 4"

# ---- the firmware's own -finstrument-functions hooks count the same calls
for isa in arm thumb; do
    emu instr_$isa || fail "instr_$isa: exit status $?"
    "$np" report --format=csv "$tmp/instr_$isa" 2>/dev/null |
        awk -F, 'NR > 1 && $2 > 0 { print $1, $2 }' | sort >"$tmp/emu.counts"
    # the hooks print "0xADDRESS COUNT" (no Thumb bit); names from the symbols
    arm-none-eabi-nm "$fw/instr_$isa.elf" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' >"$tmp/syms"
    awk 'NR == FNR { name[$1] = $2; next }
         /^0x[0-9a-f]+ [0-9]+$/ { a = substr($1, 3); if (!(a in name)) {
             # a Thumb symbol has bit 0 set in nm
             l = substr(a, length(a)); d = index("0123456789abcdef", l); a = substr(a, 1, length(a) - 1) substr("123456789abcdef", d, 1) }
           print name[a], $2 }' "$tmp/syms" "$tmp/instr_$isa.out" | sort >"$tmp/hooks.counts"
    [ -s "$tmp/hooks.counts" ] || fail "instr_$isa: no HOOK lines in its output"
    while read -r f c; do
        grep -qx "$f $c" "$tmp/emu.counts" || fail "instr_$isa: the hooks count $f $c, the emulator $(grep "^$f " "$tmp/emu.counts")"
    done <"$tmp/hooks.counts"
done

# ---- a function with a known instruction count: arm_leaf, straight-line
# code up to its bx lr, called 5 times
emu calls_arm
leaf=$(arm-none-eabi-objdump -d "$fw/calls_arm.elf" | awk '/<arm_leaf>:/ { on = 1; next } on && /^$/ { exit } on && NF > 2 { n++ } END { print n }')
got=$("$np" report --format=csv --metric=count "$tmp/calls_arm" 2>/dev/null | awk -F, '$1 == "arm_leaf" { print $5 }')
[ "$got" = "$leaf" ] || fail "arm_leaf: $got instructions in its shortest call (from ARM, no veneer), not $leaf"

# ---- the same firmware, the same trace, byte for byte
emu fib_arm && cp "$tmp/fib_arm/1.npt" "$tmp/run1.npt"
emu fib_arm && cmp -s "$tmp/fib_arm/1.npt" "$tmp/run1.npt" || fail "fib_arm: two runs gave different traces"

# ---- every view and exporter on an emulated profile
t=$tmp/fib_arm
"$np" report "$t" >"$tmp/v" 2>&1 && grep -q "cyc.*fib" "$tmp/v" || fail "report: $(head -3 "$tmp/v")"
"$np" report --metric=count "$t" >"$tmp/v" 2>&1 && grep -q "insn" "$tmp/v" || fail "report --metric=count: $(head -3 "$tmp/v")"
"$np" report --clock=100000000 "$t" >"$tmp/v" 2>&1 && grep -q " ms .*fib\| us .*fib" "$tmp/v" || fail "report --clock: $(head -4 "$tmp/v")"
"$np" tree "$t" >/dev/null 2>&1 || fail "tree"
"$np" graph "$t" fib >/dev/null 2>&1 || fail "graph"
"$np" replay "$t" 2>/dev/null | head -n 20 >/dev/null || fail "replay"
"$np" flame -o "$tmp/f.svg" "$t" 2>/dev/null && grep -q "<svg" "$tmp/f.svg" || fail "flame"
"$np" dump --format=chrome -o "$tmp/c.json" "$t" 2>/dev/null && jq -e '.traceEvents | length > 0' "$tmp/c.json" >/dev/null ||
    fail "dump chrome"
"$np" dump --format=folded -o "$tmp/f.txt" "$t" 2>/dev/null && grep -q "^main;fib;fib" "$tmp/f.txt" || fail "dump folded"
"$np" dump --format=callgrind -o "$tmp/cg.out" "$t" 2>/dev/null || fail "dump callgrind"
callgrind_annotate "$tmp/cg.out" >"$tmp/cga" 2>&1 && grep -q "fib" "$tmp/cga" || fail "callgrind_annotate: $(head -5 "$tmp/cga")"
"$np" dump --format=gmon -o "$tmp/gmon.out" "$t" 2>/dev/null || fail "dump gmon"
arm-none-eabi-gprof -b -p -q "$fw/fib_arm.elf" "$tmp/gmon.out" >"$tmp/gprof" 2>"$tmp/gprof.err" || fail "gprof: $(cat "$tmp/gprof.err")"
fibs=$("$np" report --format=csv "$t" 2>/dev/null | awk -F, '$1 == "fib" { print $2 }')
# gprof counts recursion as 1+N: main's call, and fib's own
grep -q " 1+$((fibs - 1)) *fib " "$tmp/gprof" || fail "gprof: fib's $fibs calls are not 1+$((fibs - 1)) in its call graph"
[ -s "$tmp/gprof.err" ] && fail "gprof warned: $(cat "$tmp/gprof.err")"
# its flat profile: fib's exact self cycles, in the unit the file names
self=$("$np" report --format=csv "$t" 2>/dev/null | awk -F, '$1 == "fib" { print $4 }')
grep -q "Each sample counts as 1 kcycles" "$tmp/gprof" || fail "gprof: not in kcycles: $(head -4 "$tmp/gprof")"
awk -v want="$self" '$NF == "fib" && $3 != "" { got = $3 * 1000; if (got - want < 1000 && want - got < 1000) ok = 1 }
    END { exit !ok }' "$tmp/gprof" || fail "gprof: fib's self time is not $self cycles: $(grep ' fib$' "$tmp/gprof")"
# a view reads the ELF itself: the emulator as a source, the same counts
"$np" report --format=csv "$fw/fib_arm.elf" 2>/dev/null | awk -F, 'NR > 1 { print $1, $2 }' | sort >"$tmp/direct"
counts "$t" | diff - "$tmp/direct" >/dev/null || fail "report FIRMWARE.elf differs from report of its trace"

# ---- bad input: one line, a non-zero exit, what ran kept
while read -r name stop func addr; do
    emu "$name"
    rc=$?
    [ $rc -eq 1 ] || fail "$name: exit status $rc, not 1"
    line=$(grep "error:" "$tmp/$name.err")
    [ "$(echo "$line" | wc -l)" = 1 ] || fail "$name: not one error line: $(cat "$tmp/$name.err")"
    [ "$func" = - ] || echo "$line" | grep -q "in $func" || fail "$name: the error does not name $func: $line"
    [ "$addr" = - ] || echo "$line" | grep -q "$addr" || fail "$name: the error does not name $addr: $line"
    "$np" report "$tmp/$name" >/dev/null 2>&1 || fail "$name: the trace up to the error is not readable"
done <<EOF
bad_undef undefined undef_here -
bad_jump fetch - 0x40000000
bad_read read read_away 0x40000000
bad_write write write_away 0x40000000
bad_semihost semihosting write_bad 0x40000000
EOF
# a new stack at every turn: the tracker's limit of threads stops the run, said
"$np" emu -o "$tmp/thr" "$fw/bad_threads.elf" >/dev/null 2>"$tmp/thr.err"
[ $? -eq 1 ] && grep -q "error: a stack switch to a new thread at 0x[0-9a-f]* in thread_fn, with 4096 threads already" \
    "$tmp/thr.err" && "$np" report "$tmp/thr" 2>/dev/null | grep -q "^# .*: 1 process, 4096 threads," ||
    fail "bad_threads: $(cat "$tmp/thr.err")"
"$np" emu -o "$tmp/loop" --max-insns=100000 "$fw/bad_loop.elf" >/dev/null 2>"$tmp/loop.err"
[ $? -eq 1 ] && grep -q "after 100000 instructions" "$tmp/loop.err" || fail "bad_loop: $(cat "$tmp/loop.err")"
# a device outside the image: an error that says how to map it; mapped,
# the firmware ends in `b .` with IRQs masked: a clean stop, status 0
emu halt_loop
[ $? -eq 1 ] && grep -q "write of 0x40000000 outside memory.*in run (--map maps more)" "$tmp/halt_loop.err" ||
    fail "halt_loop unmapped: $(cat "$tmp/halt_loop.err")"
emu halt_loop --map 0x40000000,4k || fail "halt_loop --map: exit status $?: $(cat "$tmp/halt_loop.err")"
grep -q "halted in a branch to itself at 0x[0-9a-f]* in run after" "$tmp/halt_loop.err" ||
    fail "halt_loop: $(cat "$tmp/halt_loop.err")"
[ "$(counts "$tmp/halt_loop" | grep '^tick ')" = "tick 3" ] || fail "halt_loop: tick not called 3 times"
"$np" emu --map 0x8000,4k "$fw/halt_loop.elf" >/dev/null 2>&1
[ $? -eq 1 ] || fail "--map over the image is not refused"
# the CPU from the ELF's build attributes: an ARMv5TE build runs on the
# ARM946E-S unasked, with the counts it has with --cpu arm946e-s; given
# the ARM7TDMI, it is refused before its first instruction
emu calls_v5
[ $? -eq 0 ] && grep -q "(ARM946E-S); " "$tmp/calls_v5.err" &&
    [ "$(counts "$tmp/calls_v5")" = "$(sort "$expected/calls_v5.calls")" ] ||
    fail "calls_v5 unasked: $(cat "$tmp/calls_v5.err")"
rm -rf "$tmp/calls_v5"
emu calls_v5 --cpu arm7tdmi
[ $? -eq 1 ] && [ "$(cat "$tmp/calls_v5.err")" = "nanoprof emu: $fw/calls_v5.elf: built for ARMv5TE (Tag_CPU_arch 4): --cpu arm7tdmi runs ARMv4T code, ARMv5TE needs arm946e-s" ] &&
    [ -z "$(ls "$tmp/calls_v5" 2>/dev/null)" ] || fail "calls_v5 on the ARM7TDMI: $(cat "$tmp/calls_v5.err")"
# an ELF that says no architecture (its attributes removed): the ARM7TDMI,
# whose error says which CPU runs ARMv5TE code
arm-none-eabi-objcopy --remove-section .ARM.attributes "$fw/calls_v5.elf" "$tmp/calls_v5_bare.elf"
"$np" emu -o "$tmp/v5bare" "$tmp/calls_v5_bare.elf" >/dev/null 2>"$tmp/v5bare.err"
[ $? -eq 1 ] && grep -q "undefined instruction blx r3 .* (ARMv5TE code runs with --cpu arm946e-s)" "$tmp/v5bare.err" ||
    fail "calls_v5 without attributes on the ARM7TDMI: $(cat "$tmp/v5bare.err")"
# each bad file: exit 1 and its one line, naming the file and what is wrong
printf 'not an ELF\n' >"$tmp/text.elf"
for c in "$tmp/text.elf|not an ELF file" "/bin/true|a 64-bit ELF: not 32-bit ARM firmware" \
    "$fw/bad_noload.elf|no loadable segment" "$tmp/missing.elf|No such file or directory" \
    "$fw/bad_cortex_m.elf|the reset vector at 0x00008004 is not a Thumb address (bit 0 clear)"; do
    f=${c%%|*}
    want="nanoprof emu: $f: ${c#*|}"
    "$np" emu -o "$tmp/bad" "$f" >/dev/null 2>"$tmp/bad.err"
    rc=$?
    [ $rc -eq 1 ] && [ "$(cat "$tmp/bad.err")" = "$want" ] || fail "$f: exit $rc: $(cat "$tmp/bad.err"), want 1: $want"
done
"$np" emu --cpu=arm9 "$fw/fib_arm.elf" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--cpu=arm9 is not a usage error"
"$np" emu --bogus "$fw/fib_arm.elf" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--bogus is not a usage error"

if [ $failures -gt 0 ]; then
    echo "test_emu_cli: $failures failures"
    exit 1
fi
echo "test_emu_cli: all passed"
