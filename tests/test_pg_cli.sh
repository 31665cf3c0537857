#!/bin/sh
# test_pg_cli.sh NANOPROF PG_PROG_C PG_THROW_CC - programs built with -pg
# and with -pg -mfentry (GCC and Clang, -O0 and -O2), recorded by
# `nanoprof record` with no option, beside `uftrace record` on the same
# binary:
# - every function's call count equal to uftrace's, and the nesting of the
#   calls (replay) equal to uftrace replay's, for tests/programs/pg_prog.c's
#   calls, signal and tail modes (threads: the counts) and the C++
#   exceptions of pg_throw.cc (with -mfentry, uftrace's of the -pg build);
# - the program's own counts, exactly, where they do not depend on how the
#   compiler shaped the code (-O0), and for longjmp and siglongjmp out of a
#   signal handler at -O2 too (uftrace 0.13 crashes on GCC's -O2 longjmp
#   build, loses calls on the others and keeps the calls a siglongjmp left
#   open, so only the exact counts and nesting check these), and a recursion 100000 deep (the
#   return stack grows past its first mapping; uftrace stops at 1024);
# - backtrace(3) inside instrumented frames sees the callers, and so do
#   --sample's stacks;
# - a program built with both -finstrument-functions and -pg: one event
#   per call;
# - arguments and return values (-A, -R, uftrace's specs): replay's lines
#   as uftrace replay's, the values exact, the Chrome export's args;
#   300000 calls' values exact as the program printed them; bad specs
#   refused in one line.
set -u
np=$1
src=$2
throw_src=$3
np_cmd=record
. "$(dirname "$0")/cli_test.sh"
need gcc clang g++ clang++ uftrace jq
export LC_ALL=C

. "$(dirname "$0")/uftrace_cmp.sh"

# x86-64: each function's call of the hook a jump to its thunk once its
# module made a call; NANOPROF_PG_THUNKS=0 (the test run again with it)
# keeps the calls, every exit through the trampoline
if [ "${NANOPROF_PG_THUNKS:-}" = 0 ]; then
    entry_bytes="call call" entry_kind="kept: NANOPROF_PG_THUNKS=0" spin_short="|^spin2;spin3"
else
    entry_bytes="jump jump" entry_kind="jumps to thunks" spin_short=""
fi

# hook_off BIN FN: how far into FN its call of the hook is (objdump)
hook_off() {
    objdump -d --no-show-raw-insn "$1" | awk -v fn="<$2>:" '
        $2 == fn { start = $1; on = 1; next }
        on && /mcount|__fentry__/ { sub(":", "", $1); print start, $1; exit }
        on && NF == 0 { exit }' | { read -r a b && echo $((0x$b - 0x$a)); }
}

for cc in gcc clang; do
    for flags in "-pg" "-pg -mfentry"; do
        for opt in -O0 -O2; do
            tag=$cc$(echo " $flags $opt" | tr ' ' '_')
            bin=$tmp/pg$tag
            if ! $cc $opt $flags -g -pthread "$src" -o "$bin" 2>"$tmp/cc_err"; then
                bad "$tag: build: $(cat "$tmp/cc_err")"
                continue
            fi
            for mode in calls signal tail; do
                rec "$mode$tag" "$bin" $mode && like_uftrace "$mode$tag" nesting
            done
            rec "threads$tag" "$bin" threads && like_uftrace "threads$tag"
            if rec "longjmp$tag" "$bin" longjmp; then
                expect "longjmp$tag: exact counts" "$tmp/longjmp$tag.np" "main 1" "guard 1" "jumper 12" "after 2"
                nesting "$tmp/longjmp$tag.np" | awk '$2 == "after" { print }' >"$tmp/a"
                same "longjmp$tag: after under main" "$tmp/a" "1 after
1 after"
            fi
            if rec "sigjmp$tag" "$bin" sigjmp; then
                expect "sigjmp$tag: exact counts" "$tmp/sigjmp$tag.np" "main 1" "sig_guard 1" "nest 4" "handler 1" \
                    "hleaf 3" "after 2"
                nesting "$tmp/sigjmp$tag.np" | awk '$2 == "after" { print }' >"$tmp/a"
                same "sigjmp$tag: after under main" "$tmp/a" "1 after
1 after"
            fi
            if rec "backtrace$tag" "$bin" backtrace; then
                same "backtrace$tag: backtrace(3) sees the callers" "$tmp/backtrace$tag.out" "bt: bt4 bt3 bt2 bt1 main"
            fi
            # a library whose first calls come from four threads at once:
            # its calls of the hook become jumps to thunks while the others
            # run its code (the int3 of a site under way sends a thread to
            # the thunk)
            lib=$tmp/lib$tag.so
            if ! $cc $opt $flags -shared -fPIC "$(dirname "$src")/pg_lib.c" -o "$lib" 2>"$tmp/cc_err"; then
                bad "libthreads$tag: build: $(cat "$tmp/cc_err")"
            elif "$np" record -o "$tmp/lib$tag.np" -- "$bin" libthreads "$lib" 20000 "$(hook_off "$bin" leaf)" \
                "$(hook_off "$lib" lib_work)" >"$tmp/out" 2>"$tmp/err"; then
                expect "libthreads$tag: exact counts" "$tmp/lib$tag.np" "main 1" "lib_threads 1" "lib_thread 4" \
                    "lib_work 80000" "lib_leaf 160000"
                same "libthreads$tag: calls of the hook rewritten ($entry_kind)" "$tmp/out" "entry: $entry_bytes"
            else
                bad "libthreads$tag: record:"; cat "$tmp/err"
            fi
            [ $opt = -O0 ] || continue
            if rec "exact$tag" "$bin" calls; then
                expect "calls$tag: exact counts" "$tmp/exact$tag.np" "main 1" "top 3" "mid 6" "leaf 12" "fib 465"
            fi
            if rec "signalx$tag" "$bin" signal; then
                expect "signal$tag: exact counts" "$tmp/signalx$tag.np" "main 1" "nest 4" "handler 1" "hleaf 3" \
                    "after 2"
            fi
            if rec "threadsx$tag" "$bin" threads; then
                expect "threads$tag: exact counts" "$tmp/threadsx$tag.np" "main 1" "worker 4" "wleaf 4000"
            fi
            if rec "tailx$tag" "$bin" tail; then
                expect "tail$tag: exact counts" "$tmp/tailx$tag.np" "main 1" "tail_a 3" "tail_b 3" "tail_c 3" "leaf 6"
            fi
            # --sample's stacks: a sample in spin3 has its callers, each
            # frame's return address the caller's, not the thunk's or the
            # trampoline's that stands in its slot; so has one taken in a
            # hook (the hook's frame's return address is the caller's, or,
            # before the prologue, the walk goes on from the caller's
            # frame: docs/sampling.md; through __fentry__'s trampoline,
            # some keep the function and its caller only). tick's
            # samples, most of them in its hooks: at least 9/10 of their
            # periods under all of tick's callers with thunks, those at
            # its first instruction (the jump to its thunk), in its
            # prologue and after its epilogue too (without the walk's
            # look at the stack pointer there, a sixth to a third were
            # not; without the frames' fix, about 1/3; left: a sample in a
            # hook's call of libc, pthread_cond_signal's, whose frame
            # pointer the walk cannot follow, one in 40)
            if "$np" record --sample=997 -o "$tmp/spin$tag.np" -- "$bin" spin >/dev/null 2>"$tmp/err"; then
                "$np" dump --format=folded --samples "$tmp/spin$tag.np" 2>/dev/null >"$tmp/b"
                awk '$1 ~ /spin3$/' "$tmp/b" >"$tmp/a"
                if grep -q ';main;spin1;spin2;spin3 ' "$tmp/a" && ! grep -Eqv "(;main;spin1;spin2;spin3$spin_short) " "$tmp/a"
                then
                    ok "spin$tag: every sample in spin3 under main, spin1, spin2"
                else
                    bad "spin$tag: samples in spin3 without their callers:"; cat "$tmp/a"
                fi
                # (a sample in the thunks' code, their shared code too, is
                # left out, counted; one in a PLT stub is NAME@plt: clang's
                # calls of mcount through the trampoline: never a frame
                # with no name)
                if grep -q '0x[0-9a-f]' "$tmp/b"; then
                    bad "spin$tag: unnamed frames:"; grep '0x[0-9a-f]' "$tmp/b" | head -3
                else
                    ok "spin$tag: every frame named"
                fi
                if [ -z "$spin_short" ]; then
                    awk '$1 ~ /;tick$/ { all += $2; if ($1 ~ /;main;spin1;spin2;spin3;tick$/) full += $2 }
                         END { exit !(all > 0 && full >= 0.9 * all) }' "$tmp/b" &&
                        ok "spin$tag: tick's samples, in its hooks too, under its callers" ||
                        { bad "spin$tag: tick's samples without their callers:"; grep ';tick ' "$tmp/b"; }
                fi
            else
                bad "spin$tag: record --sample:"; cat "$tmp/err"
            fi
            # the same from the unwind tables (libunwind), which have none
            # for a hook's return point: the caller from the return stack,
            # the walk resumed there (sample.c); in a hook, the frames'
            # walk where the tables end before the call site
            if "$np" record --sample=997 --unwind=dwarf -o "$tmp/spind$tag.np" -- "$bin" spin >/dev/null 2>"$tmp/err"
            then
                "$np" dump --format=folded --samples "$tmp/spind$tag.np" 2>/dev/null >"$tmp/b"
                awk '$1 ~ /spin3$/' "$tmp/b" >"$tmp/a"
                if grep -q ';main;spin1;spin2;spin3 ' "$tmp/a" && ! grep -Eqv ";main;spin1;spin2;spin3$spin_short " "$tmp/a" &&
                    ! grep -q '0x[0-9a-f]' "$tmp/b"; then
                    ok "spin$tag, --unwind=dwarf: every sample in spin3 under main, spin1, spin2; every frame named"
                else
                    bad "spin$tag, --unwind=dwarf: stacks:"; cat "$tmp/b"
                fi
            else
                bad "spin$tag: record --sample --unwind=dwarf:"; cat "$tmp/err"
            fi
            "$np" record -o "$tmp/deep$tag.np" -- "$bin" deep 100000 >"$tmp/out" 2>"$tmp/err"
            if grep -q "deep 100000" "$tmp/out"; then
                expect "deep$tag: 100001 calls deep" "$tmp/deep$tag.np" "main 1" "deep 100001" "leaf 1"
                nesting "$tmp/deep$tag.np" | sort -n | tail -n 1 >"$tmp/a"
                same "deep$tag: nesting 100001 deep" "$tmp/a" "100001 deep"
            else
                bad "deep$tag: the program did not finish:"; cat "$tmp/out" "$tmp/err"
            fi
        done
    done
done

# a bad NANOPROF_PG_THUNKS is refused before the program runs
NANOPROF_PG_THUNKS=no "$np" record -o "$tmp/badthunks" -- "$tmp/pggcc_-pg_-O0" calls >"$tmp/out" 2>"$tmp/err"
rc=$?
status "record: a bad NANOPROF_PG_THUNKS is refused" 2 "NANOPROF_PG_THUNKS=no in the environment is not 0 or 1"

# Arguments and return values (-A, -R): the lines of replay as uftrace
# replay's with the same specs (uftrace's ';' and empty "()" left out, and
# a NULL string, which it shows as "NULL" in quotes, as NULL), exact, and
# the Chrome export's args (jq)
uf_lines() {
    uftrace replay -d "$1" -f none --no-pager | sed -e 's/;$//' -e 's/() {$/ {/' -e 's/()$//' -e 's/"NULL"/NULL/g'
}
for cc in gcc clang; do
    for flags in "-pg" "-pg -mfentry"; do
        tag=$cc$(echo " $flags" | tr ' ' '_')
        bin=$tmp/args$tag
        if ! $cc -O2 $flags -pthread "$src" -o "$bin" 2>"$tmp/cc_err"; then
            bad "args$tag: build: $(cat "$tmp/cc_err")"
            continue
        fi
        set -- -A 'add@arg1/i32,arg2' -R 'add@retval' -A 'greet@arg1/s,arg2/u32,arg3/c' -R 'greet@retval/s' \
            -A 'pass@arg1/p' -R 'pass@retval/x'
        "$np" record -o "$tmp/args$tag.np" "$@" -- "$bin" args >/dev/null 2>"$tmp/err" ||
            { bad "args$tag: record:"; cat "$tmp/err"; continue; }
        uftrace record --no-libcall --no-sched -d "$tmp/args$tag.uf" "$@" "$bin" args >/dev/null 2>&1
        lines "$tmp/args$tag.np" >"$tmp/a"
        uf_lines "$tmp/args$tag.uf" >"$tmp/b"
        same_files "args$tag: replay as uftrace replay's" "$tmp/b" "$tmp/a"
        args_values "args$tag: the values passed and returned" "$tmp/a"
        "$np" dump --format=chrome "$tmp/args$tag.np" |
            jq -c '[.traceEvents[] | select(.ph == "E" and .args != null) | {name, args}] | sort_by(.name, .args.arg1 | tostring)' \
            >"$tmp/a" 2>"$tmp/err"
        same "args$tag: Chrome export's args" "$tmp/a" \
            '[{"name":"add","args":{"arg1":-1,"arg2":5,"retval":4}},{"name":"add","args":{"arg1":2,"arg2":40,"retval":42}},{"name":"greet","args":{"arg1":"NULL","arg2":0,"arg3":"'"'y'"'","retval":"NULL"}},{"name":"greet","args":{"arg1":"world","arg2":3,"arg3":"'"'x'"'","retval":"world"}},{"name":"pass","args":{"arg1":"0x1234","retval":"0x1234"}}]'
    done
done
# Many calls' values, through many buffers and chunks (a VALUES record
# of the same spec as the last one keeps the differences alone): exact,
# as the program printed them
for cc in gcc clang; do
    bin=$tmp/args${cc}_-pg_-mfentry
    [ -x "$bin" ] || continue
    "$np" record -o "$tmp/loop$cc.np" -A 'mix@arg1,arg2/x,arg3/i32,arg4/p' -R mix@retval -- "$bin" argloop 300000 \
        >"$tmp/want" 2>"$tmp/err" || { bad "argloop $cc: record:"; cat "$tmp/err"; continue; }
    lines "$tmp/loop$cc.np" >"$tmp/a"
    [ "$(wc -l <"$tmp/a")" = 300002 ] && ok "argloop $cc: 300000 calls" || bad "argloop $cc: $(wc -l <"$tmp/a") lines"
    same_files "argloop $cc: every call's arguments and return value" "$tmp/want" "$tmp/a"
    # six arguments (three records of registers), and five of them (the
    # last record's second word not an argument)
    "$np" record -o "$tmp/six$cc.np" -A 'six@arg1,arg2,arg3,arg4,arg5,arg6' -R six@retval -- "$bin" argsix 3000 \
        >"$tmp/want" 2>"$tmp/err" || { bad "argsix $cc: record:"; cat "$tmp/err"; continue; }
    lines "$tmp/six$cc.np" >"$tmp/a"
    same_files "argsix $cc: six arguments of every call" "$tmp/want" "$tmp/a"
    # with no format, a value shows as uftrace shows it (decimal, or hex
    # beyond 100000 either way): replay's lines are uftrace replay's
    uftrace record --no-libcall --no-sched -d "$tmp/six$cc.uf" -A 'six@arg1,arg2,arg3,arg4,arg5,arg6' -R six@retval \
        "$bin" argsix 3000 >/dev/null 2>&1
    uf_lines "$tmp/six$cc.uf" | grep 'six' >"$tmp/b"
    grep 'six' "$tmp/a" >"$tmp/c"
    same_files "argsix $cc: as uftrace replay shows them" "$tmp/b" "$tmp/c"
    "$np" record -o "$tmp/five$cc.np" -A 'six@arg1,arg2,arg3,arg4,arg5' -- "$bin" argsix 3000 >"$tmp/want" 2>"$tmp/err" ||
        { bad "argsix $cc: record:"; cat "$tmp/err"; continue; }
    lines "$tmp/five$cc.np" >"$tmp/a"
    sed 's/^\(  six(.*\), [-0-9a-fx]*) = .*/\1)/' "$tmp/want" >"$tmp/b"
    same_files "argsix $cc: five arguments of every call" "$tmp/b" "$tmp/a"
done
# A return value of a function that tail-calls another: both calls end at
# the one return, and both show it, as uftrace shows them
for cc in gcc clang; do
    bin=$tmp/args${cc}_-pg_-mfentry
    [ -x "$bin" ] || continue
    "$np" record -o "$tmp/tr$cc.np" -R 'tv_*@retval' -- "$bin" tailret >/dev/null 2>"$tmp/err" ||
        { bad "tailret $cc: record:"; cat "$tmp/err"; continue; }
    uftrace record --no-libcall --no-sched -d "$tmp/tr$cc.uf" -R 'tv_*@retval' "$bin" tailret >/dev/null 2>&1
    lines "$tmp/tr$cc.np" >"$tmp/a"
    # (uftrace writes "f() = 9" for a call with no arguments and "} = 9; /*")
    uf_lines "$tmp/tr$cc.uf" | sed -e 's/() = / = /' -e 's|; /\*| /*|' >"$tmp/b"
    grep -q '^  } = 6 /\* tv_outer \*/$' "$tmp/a" && same_files "tailret $cc: the caller's return value too" "$tmp/b" "$tmp/a" ||
        bad "tailret $cc: $(tr '\n' '|' <"$tmp/a")"
done
# bad specs: one line, status 2, nothing run
bin=$tmp/argsgcc_-pg
for spec in "-A nosuch@arg1:matches no function" "-A add@arg9:is not an argument" "-A add@arg1/z:is not a format" \
    "-A add:names no function" "-R add@arg1:is not retval" "-A add@arg1,:ends with a comma" \
    "-A add@arg1/s16:a size is"; do
    opt=${spec%%:*}
    run $opt -o "$tmp/bad.np" -- "$bin" args
    status "record $opt: refused" 2 "${spec#*:}"
    [ ! -e "$tmp/bad.np" ] || bad "record $opt: a trace was made"
done
gcc -O0 -finstrument-functions -pthread "$src" -o "$tmp/cyg" 2>"$tmp/cc_err" || bad "cyg build: $(cat "$tmp/cc_err")"
run -A add@arg1 -o "$tmp/bad.np" -- "$tmp/cyg" args
status "record -A on a -finstrument-functions build: refused" 2 "is not built with -pg"

# C++ exceptions through -pg frames: counts and nesting as uftrace's, and exact
for cxx in g++ clang++; do
    for flags in "-pg" "-pg -mfentry"; do
        for opt in -O0 -O2; do
            tag=$cxx$(echo " $flags $opt" | tr ' ' '_')
            bin=$tmp/throw$tag
            if ! $cxx $opt $flags "$throw_src" -o "$bin" 2>"$tmp/cc_err"; then
                bad "$tag: build: $(cat "$tmp/cc_err")"
                continue
            fi
            rec "throw$tag" "$bin" || continue
            # the nesting as uftrace gives it for the -pg build: with
            # -mfentry, uftrace 0.13 leaves each frame's call open while the
            # next frame's destructors run (one level too deep)
            ref=$tmp/ref$cxx$opt
            if [ "$flags" = -pg ]; then
                like_uftrace "throw$tag" nesting
                uf_nesting "$tmp/throw$tag.uf" >"$ref"
            else
                like_uftrace "throw$tag"
                nesting "$tmp/throw$tag.np" >"$tmp/a"
                same_files "throw$tag: nesting as uftrace's of the -pg build" "$ref" "$tmp/a"
            fi
            throw_counts "throw$tag: exact counts" "$tmp/throw$tag.np"
        done
    done
done

# Both hooks in one build: each call once
for cc in gcc clang; do
    bin=$tmp/both$cc
    if $cc -O0 -pg -mfentry -finstrument-functions -pthread "$src" -o "$bin" 2>"$tmp/cc_err"; then
        rec "both$cc" "$bin" calls &&
            expect "both$cc: -pg and -finstrument-functions, one event per call" "$tmp/both$cc.np" \
                "main 1" "top 3" "mid 6" "leaf 12" "fib 465"
    else
        bad "both$cc: build: $(cat "$tmp/cc_err")"
    fi
done
finish
