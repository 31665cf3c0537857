#!/bin/sh
# test_gmon_cli.sh NANOPROF gen GEN
#     `nanoprof dump --format=gmon` on the trace `test_analyze_gen gmon`
#     writes (numbers in test_analyze_gen.c): the file's exact bytes
#     against the layout rebuilt here from readelf and nm, with the default
#     bucket and --bucket=64; GNU gprof reads it without a word on stderr
#     (flat profile, call graph, block counts); a bin that saturates; bad
#     input and usage.
# test_gmon_cli.sh NANOPROF record GMON_PROG GMON_PROG_NOPIE BLOCKS_PROG
#     real programs under `nanoprof record`: gmon_prog (PIE and not;
#     tests/programs/gmon_prog.c) sampled at 997 Hz: gprof's call counts
#     are report's exactly, its time shares `report --samples`'s (within a
#     point), and the samples split as the CPU time the program measured
#     (within the binomial spread of their number); blocks_prog's block
#     counts as `gprof -l -C` prints them are `nanoprof blocks`'s.
set -u
np=$1
mode=$2
shift 2
np_cmd=dump
. "$(dirname "$0")/cli_test.sh"
need gprof readelf nm od script

# gprof_run NAME ARGS...: gprof -b ARGS into $tmp/gp; its stderr must be empty
gprof_run() {
    name=$1
    shift
    gprof -b "$@" >"$tmp/gp" 2>"$tmp/gp_err"
    if [ $? = 0 ] && [ ! -s "$tmp/gp_err" ]; then ok "$name: gprof quiet"; else
        bad "$name: gprof quiet"; cat "$tmp/gp_err"; fi
}
# flat: "name,calls,%time" per function of $tmp/gp's flat profile, by name
# (calls empty for a function gprof has none for)
flat() {
    awk '/^ *[0-9.]+ +[0-9.]+ +[0-9.]+ / {
            if (NF >= 7) print $7 "," $4 "," $1; else print $4 ",," $1 }' "$tmp/gp" | LC_ALL=C sort
}

if [ "$mode" = gen ]; then
    gen=$1
    "$gen" gmon "$tmp/t" || { echo "test_analyze_gen failed"; exit 1; }
    # ---- the layout, rebuilt from the ELF file ----
    # .text's address and size (readelf), the functions' addresses (nm)
    set -- $(readelf -SW "$gen" | sed -n 's/^ *\[ *[0-9]*\] //p' | awk '$1 == ".text" { print $3, $5 }')
    text_lo=$((0x$1))
    text_hi=$((0x$1 + 0x$2))
    addr() { printf '%d' "0x$(nm "$gen" | awk -v n="$1" '$3 == n { print $1 }')"; }
    main=$(addr sample_main)
    helper=$(addr sample_helper)
    leaf=$(addr sample_leaf)
    fib=$(addr sample_fib)
    # le BYTES VALUE: little-endian, one hex byte a line
    le() {
        v=$2
        i=0
        while [ $i -lt "$1" ]; do
            printf '%02x\n' $((v & 255))
            v=$((v >> 8))
            i=$((i + 1))
        done
    }
    # expected BUCKET: the whole file, one hex byte a line
    expected() {
        b=$1
        lo=$((text_lo / b * b))
        hi=$(((text_hi + b - 1) / b * b))
        n=$(((hi - lo) / b))
        printf '67\n6d\n6f\n6e\n'   # "gmon"
        le 4 1                       # version
        le 12 0                      # spare
        le 1 0                       # TIME_HIST
        le 8 $lo
        le 8 $hi
        le 4 $n
        le 4 997                     # the SAMPLING's rate
        printf '73\n65\n63\n6f\n6e\n64\n73\n'; le 8 0; printf '73\n'   # "seconds", 's'
        # 4 periods at helper+4, 1 at leaf+2 (0x10: in no module)
        awk -v n=$n -v h=$(((helper + 4 - lo) / b)) -v l=$(((leaf + 2 - lo) / b)) 'BEGIN {
            c[h] += 4; c[l] += 1
            for (i = 0; i < n; i++) printf "%02x\n%02x\n", c[i] % 256, int(c[i] / 256) }'
        # arcs by caller and callee address: main -> helper 2, helper -> leaf 1, fib -> fib 1
        printf '%s\n' "$main $helper 2" "$helper $leaf 1" "$fib $fib 1" | sort -n -k1,1 -k2,2 >"$tmp/arcs"
        while read -r from to count; do
            le 1 1
            le 8 "$from"
            le 8 "$to"
            le 4 "$count"
        done <"$tmp/arcs"
        # the program's blocks by address: leaf 4, fib 7
        le 1 2
        le 4 2
        if [ "$leaf" -lt "$fib" ]; then set -- "$leaf" 4 "$fib" 7; else set -- "$fib" 7 "$leaf" 4; fi
        le 8 "$1"; le 8 "$2"; le 8 "$3"; le 8 "$4"
    }
    hexdump() { od -An -v -tx1 "$1" | tr -s ' ' '\n' | sed '/^$/d'; }

    run --format=gmon "$tmp/t" -o "$tmp/gmon.out"
    [ "$rc" = 0 ] && ok "exit 0" || bad "exit $rc"
    same "warnings: what lies outside the program, one line each" "$tmp/err" \
"nanoprof dump: warning: gmon: sampled periods outside the .text of $gen left out: 1 of 6
nanoprof dump: warning: gmon: call arcs from or to functions outside $gen left out: 1 (1 calls)
nanoprof dump: warning: gmon: basic blocks outside $gen left out: 1 of 3"
    expected 4 >"$tmp/want.hex"
    hexdump "$tmp/gmon.out" >"$tmp/got.hex"
    if cmp -s "$tmp/want.hex" "$tmp/got.hex"; then ok "bytes: the expected layout (bucket 4)"; else
        bad "bytes: the expected layout (bucket 4)"; diff "$tmp/want.hex" "$tmp/got.hex" | head -20; fi
    run --format=gmon --bucket=64 "$tmp/t" -o "$tmp/gmon64.out"
    expected 64 >"$tmp/want.hex"
    hexdump "$tmp/gmon64.out" >"$tmp/got.hex"
    if [ "$rc" = 0 ] && cmp -s "$tmp/want.hex" "$tmp/got.hex"; then ok "bytes: --bucket=64"; else
        bad "bytes: --bucket=64"; diff "$tmp/want.hex" "$tmp/got.hex" | head -20; fi
    # stdout carries the same bytes (binary output is not altered)
    "$np" dump --format=gmon "$tmp/t" >"$tmp/stdout.out" 2>/dev/null
    cmp -s "$tmp/stdout.out" "$tmp/gmon.out" && ok "stdout: the same bytes" || bad "stdout: the same bytes"

    # ---- gprof reads it: -l, since without it gprof ignores block counts (and says so) ----
    gprof_run "flat profile" -p -l "$gen" "$tmp/gmon.out"
    # helper 4 periods, leaf 1: 80% and 20%; calls 2 and 1
    awk '/^ *[0-9.]+ +[0-9.]+ +[0-9.]+ / { sub(/ \(.*/, ""); print $NF "," $4 "," $1 }' "$tmp/gp" | LC_ALL=C sort >"$tmp/flat"
    same "flat profile: time from the samples, calls from the arcs" "$tmp/flat" "sample_helper,2,80.00
sample_leaf,1,20.00"
    grep -q 'Each sample counts as 0.00100301 seconds' "$tmp/gp" && ok "flat profile: 997 Hz" ||
        { bad "flat profile: 997 Hz"; cat "$tmp/gp"; }
    gprof_run "call graph" -q -l "$gen" "$tmp/gmon.out"
    grep -q '^ *0.00 *0.00 *2/2 *sample_main ' "$tmp/gp" && grep -q '<spontaneous>' "$tmp/gp" &&
        grep -q '^ *0.00 *0.00 *1/1 *sample_helper ' "$tmp/gp" && grep -q '0+1 *sample_fib ' "$tmp/gp" &&
        ok "call graph: main -> helper 2, helper -> leaf 1, fib -> fib 1, main spontaneous" ||
        { bad "call graph: main -> helper 2, helper -> leaf 1, fib -> fib 1, main spontaneous"; cat "$tmp/gp"; }
    gprof_run "block counts" -l -C "$gen" "$tmp/gmon.out"
    grep -q "(sample_leaf:0x[0-9a-f]*) 4 executions" "$tmp/gp" && grep -q "(sample_fib:0x[0-9a-f]*) 7 executions" "$tmp/gp" &&
        ok "block counts: leaf 4, fib 7" || { bad "block counts: leaf 4, fib 7"; cat "$tmp/gp"; }

    # ---- a bin over 16 bits ----
    "$gen" gmon_saturate "$tmp/sat" || exit 1
    run --format=gmon "$tmp/sat" -o "$tmp/sat.out"
    status "80002 periods in one bin: a warning" 0 "14467 sampled periods lost: histogram bins hold at most 65535"
    bin=$((20 + 1 + 8 + 8 + 4 + 4 + 16 + (main + 4 - text_lo / 4 * 4) / 4 * 2))
    [ "$(od -An -tu2 -j $bin -N 2 "$tmp/sat.out" | tr -d ' ')" = 65535 ] && ok "the bin holds 65535" ||
        bad "the bin holds 65535"

    # ---- bad input, usage ----
    "$gen" gmon_empty "$tmp/empty" || exit 1
    run --format=gmon "$tmp/empty" -o "$tmp/e.out"
    status "no samples, calls nor blocks: exit 1" 1 "no samples, calls nor basic-block counts"
    [ -e "$tmp/e.out" ] && bad "no samples: no file" || ok "no samples: no file"
    run --format=gmon "$tmp/empty"
    [ -s "$tmp/out" ] && bad "no samples: nothing on stdout" || ok "no samples: nothing on stdout"
    for b in 0 3 1 2097152 x 4k -8 ""; do
        run --format=gmon --bucket="$b" "$tmp/t" -o "$tmp/b.out"
        status "--bucket=$b: exit 2" 2 "bucket"
    done
    run --format=folded --bucket=4 "$tmp/t"
    status "--bucket with folded: exit 2" 2 "does not apply"
    run --format=gmon --bucket=2 "$tmp/t" -o "$tmp/b2.out"
    [ "$rc" = 0 ] && [ "$(od -An -tu4 -j 37 -N 4 "$tmp/b2.out" | tr -d ' ')" = $(((text_hi + 1) / 2 - text_lo / 2)) ] &&
        ok "--bucket=2: one bin per 2 bytes" || bad "--bucket=2: one bin per 2 bytes"
    script -qec "'$np' dump --format=gmon '$tmp/t'" /dev/null >"$tmp/tty" 2>&1
    rc=$?
    tr -d '\r' <"$tmp/tty" >"$tmp/err"
    status "a terminal: refused" 2 "not written to a terminal"
    finish
fi

# ---- record: real programs ----
prog=$1
prog_nopie=$2
blocks_prog=$3
# near A B POINTS: |A - B| <= POINTS
near() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; exit !(d <= p && -d <= p) }'; }

for p in "$prog" "$prog_nopie"; do
    kind=pie
    [ "$p" = "$prog_nopie" ] && kind=no-pie
    rm -rf "$tmp/r"
    "$np" record --sample=997 -o "$tmp/r" -- "$p" 1500 >"$tmp/prog_out" 2>"$tmp/rec_err" ||
        { bad "$kind: record"; cat "$tmp/rec_err"; continue; }
    run --format=gmon "$tmp/r" -o "$tmp/gmon.out"
    [ "$rc" = 0 ] && ok "$kind: dump exit 0" || { bad "$kind: dump exit $rc"; cat "$tmp/err"; }
    grep -v 'warning: gmon: sampled periods outside' "$tmp/err" >"$tmp/err2"
    [ -s "$tmp/err2" ] && { bad "$kind: dump says nothing but samples outside"; cat "$tmp/err2"; } ||
        ok "$kind: dump says nothing but samples outside"
    gprof_run "$kind: flat profile" -p "$p" "$tmp/gmon.out"
    flat >"$tmp/flat"
    "$np" report --format=csv "$tmp/r" | tail -n +2 | cut -d, -f1-4 >"$tmp/report"
    # nanoprof's sampled self time per function of the program ("name,self_ns")
    "$np" report --samples --format=csv "$tmp/r" 2>/dev/null |
        awk -F, -v p="$p" '$8 == p { print $1 "," $4 }' >"$tmp/sampled"
    total=$(awk -F, '{ s += $2 } END { print s }' "$tmp/sampled")
    # every function's calls exactly; main, called from no function, has none in gprof
    while IFS=, read -r name calls _; do
        got=$(awk -F, -v n="$name" '$1 == n { print $2 }' "$tmp/flat")
        want=$calls
        [ "$name" = main ] && want=
        [ "$got" = "$want" ] && ok "$kind: $name: calls '$want'" || { bad "$kind: $name: calls '$got', want '$want'"; cat "$tmp/gp"; }
        [ "$name" = main ] && continue
        share=$(awk -F, -v n="$name" '$1 == n { print $3 }' "$tmp/flat")
        # the same samples as nanoprof's estimate: only rounding apart
        sampled=$(awk -F, -v n="$name" -v t="$total" '$1 == n { printf "%.2f", 100 * $2 / t }' "$tmp/sampled")
        near "${share:-0}" "${sampled:-0}" 1 && ok "$kind: $name: gprof ${share:-0}%, report --samples ${sampled:-0}%" ||
            bad "$kind: $name: gprof ${share:-0}%, report --samples ${sampled:-0}%"
    done <"$tmp/report"
    # the samples' split, against the CPU time the program measured around
    # main's calls (gp_light's with gp_tiny's): each sample falls in a part
    # with the probability p of its share of that time, so its count is
    # within 4 standard deviations of the binomial, sqrt(p (1 - p) / n) of
    # the n samples, plus 0.01 for what the measurement holds that no
    # sample of these functions does (the six clock reads around main's
    # calls and the hooks of 4050 calls: under 0.1% of 1.5 s; 1% allowed)
    "$np" report --samples --format=csv "$tmp/r" 2>/dev/null |
        awk -F, -v p="$p" '$8 == p { print "samples", $1, $2 }' >"$tmp/counts"
    awk -v kind="$kind" '
        $1 == "cpu" { cpu[$2] = $3; all_ms += $3 }
        $1 == "samples" { n[$2] = $3 }
        END {
            # a sample counts for each function on its stack: those of
            # gp_tiny for gp_light too
            part["gp_heavy"] = n["gp_heavy"]; part["gp_medium"] = n["gp_medium"]; part["gp_light"] = n["gp_light"]
            all = part["gp_heavy"] + part["gp_medium"] + part["gp_light"]
            if (!all || !all_ms) { print "FAIL " kind ": no samples or no CPU time measured"; exit }
            for (f in part) {
                want = cpu[f] / all_ms; got = part[f] / all; tol = 4 * sqrt(want * (1 - want) / all) + 0.01
                d = got - want; if (d < 0) d = -d
                printf "%s %s: %s: %.3f of %d samples, %.3f +- %.3f measured\n", (d <= tol ? "ok  " : "FAIL"), kind, f,
                       got, all, want, tol
            }
        }' "$tmp/prog_out" "$tmp/counts" >"$tmp/split"
    cat "$tmp/split"
    pass=$((pass + $(grep -c '^ok ' "$tmp/split")))
    fail=$((fail + $(grep -c '^FAIL' "$tmp/split")))
    gprof_run "$kind: call graph" -q "$p" "$tmp/gmon.out"
    for arc in "4/4 main gp_heavy" "6/6 main gp_medium" "40/40 main gp_light" "4000/4000 gp_light gp_tiny"; do
        set -- $arc
        # the caller's line right above the callee's entry [N]
        awk -v c="$1" -v from="$2" -v to="$3" '
            $NF ~ /^\[[0-9]+\]$/ && $1 ~ /^\[/ { if (prev_calls == c && prev_name == from && $(NF - 1) == to) found = 1 }
            { prev_calls = NF >= 3 ? $(NF - 2) : ""; prev_name = NF >= 3 ? $(NF - 1) : "" }
            END { exit !found }' "$tmp/gp" && ok "$kind: call graph: $2 -> $3 $1" ||
            { bad "$kind: call graph: $2 -> $3 $1"; cat "$tmp/gp"; }
    done
done

# ---- basic blocks: gprof -l -C against nanoprof blocks ----
rm -rf "$tmp/b"
"$np" record -o "$tmp/b" -- "$blocks_prog" loop 1000 >/dev/null 2>"$tmp/rec_err" ||
    { bad "blocks: record"; cat "$tmp/rec_err"; }
run --format=gmon "$tmp/b" -o "$tmp/blocks.out"
status "blocks: dump exit 0, quiet" 0
gprof_run "blocks: -l -C" -l -C "$blocks_prog" "$tmp/blocks.out"
# "function,line,executions" summed per line: gprof's block lines, and nanoprof's line rows
awk '/^[^ ]*:[0-9]+: \([^:]*:0x[0-9a-f]+\) [0-9]+ executions$/ {
        split($1, fl, ":"); sub(/^\(/, "", $2); split($2, fa, ":"); s[fa[1] "," fl[2]] += $3 }
     END { for (k in s) print k "," s[k] }' "$tmp/gp" | LC_ALL=C sort >"$tmp/gprof_lines"
"$np" blocks --format=csv "$tmp/b" | awk -F, '$1 == "line" { print $2 "," $6 "," $3 }' | LC_ALL=C sort >"$tmp/np_lines"
if [ -s "$tmp/np_lines" ] && cmp -s "$tmp/gprof_lines" "$tmp/np_lines"; then
    ok "blocks: gprof's counts per line are nanoprof blocks's ($(wc -l <"$tmp/np_lines") lines)"
else
    bad "blocks: gprof's counts per line are nanoprof blocks's"; diff "$tmp/np_lines" "$tmp/gprof_lines"
fi
finish
