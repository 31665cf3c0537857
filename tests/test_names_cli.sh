#!/bin/sh
# test_names_cli.sh BUILD_DIR PROGRAMS_DIR - every function has its name,
# and one name in two functions is told apart:
#   - two static functions called twin (tests/programs/twin_*.c) show
#     their source files with -g (`twin [twin_a.c]`; more of the path,
#     `twin [x/twin.c]`, when the base names are one too), their
#     addresses without debug information;
#   - assembly without .type on the host (tests/programs/labels.S): a
#     global and a weak label, called from C, named in report and in
#     samples taken past their first instruction; their local labels
#     never;
#   - an ARM firmware with global, weak and local labels without .type in
#     ARM and Thumb code (tests/firmware/labels/) under `nanoprof emu`:
#     exact counts and instructions, its tree, the emulator's error naming
#     a label; mapping symbols ($a, $t, $d) never names.
set -u
build=$1
programs=$2
np=$build/src/nanoprof
fw=$build/tests/firmware
expected=$(dirname "$0")/firmware/expected
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
for t in cc nm jq; do
    command -v $t >/dev/null 2>&1 || { echo "FAIL $t is not installed (scripts/deps.sh installs it)"; exit 1; }
done
export LC_ALL=C

# rows TRACE [OPTIONS...]: "name,calls" of the functions with calls, sorted
rows() {
    rows_trace=$1
    shift
    "$np" report --format=csv "$@" "$rows_trace" 2>/dev/null | awk -F, 'NR > 1 && $2 > 0 { print $1 "," $2 }' | sort
}

# ---- same-name statics: source file with -g, address without
cc -g -O0 -finstrument-functions "$programs/twin_main.c" "$programs/twin_a.c" "$programs/twin_b.c" -o "$tmp/twins" &&
    cc -O0 -finstrument-functions "$programs/twin_main.c" "$programs/twin_a.c" "$programs/twin_b.c" -o "$tmp/twins_nog" ||
    { bad "building the twins"; finish; }
mkdir -p "$tmp/x" "$tmp/y"
cp "$programs/twin_a.c" "$tmp/x/twin.c"
cp "$programs/twin_b.c" "$tmp/y/twin.c"
cc -g -O0 -finstrument-functions "$programs/twin_main.c" "$tmp/x/twin.c" "$tmp/y/twin.c" -o "$tmp/twins_path" ||
    { bad "building the twins of one file name"; finish; }
for p in twins twins_nog twins_path; do
    "$np" record -o "$tmp/$p.t" -- "$tmp/$p" >/dev/null 2>&1 || bad "record $p"
done

rows "$tmp/twins.t" >"$tmp/got"
same "twins, -g: their source files" "$tmp/got" "main,1
twin [twin_a.c],3
twin [twin_b.c],2
twin_a,3
twin_b,2"
"$np" tree --ascii "$tmp/twins.t" 2>/dev/null | grep -E 'twin \[' | sed 's/.*- //' >"$tmp/got"
same "twins, -g: tree" "$tmp/got" "twin [twin_a.c]
twin [twin_b.c]"
"$np" graph "$tmp/twins.t" twin 2>/dev/null | grep '^\[' | sed 's/.*  //; s/ \[[0-9]*\]$//' | sort >"$tmp/got"
same "twins, -g: graph twin shows both" "$tmp/got" "twin [twin_a.c]
twin [twin_b.c]"
"$np" report --format=json "$tmp/twins.t" 2>/dev/null |
    jq -r '.functions[] | select(.symbol == "twin") | "\(.name)|\(.file | split("/") | last)"' | sort >"$tmp/got"
same "twins, -g: json name and file" "$tmp/got" "twin [twin_a.c]|twin_a.c
twin [twin_b.c]|twin_b.c"

# without debug information: the address of each in the program (twin_a.c's
# first: the objects are linked in the order given)
nm "$tmp/twins_nog" | awk '$3 == "twin" { print $1 }' | sort | sed 's/^0*//' >"$tmp/addrs"
a=$(sed -n 1p "$tmp/addrs")
b=$(sed -n 2p "$tmp/addrs")
rows "$tmp/twins_nog.t" | grep '^twin ' >"$tmp/got"
same "twins, no -g: their addresses" "$tmp/got" "twin [twins_nog:0x$a],3
twin [twins_nog:0x$b],2"

rows "$tmp/twins_path.t" | grep '^twin ' >"$tmp/got"
same "twins in two files of one name: more of the path" "$tmp/got" "twin [x/twin.c],3
twin [y/twin.c],2"
rows "$tmp/twins_path.t" -F 'twin' >"$tmp/got"
same "twins: -F twin matches both" "$tmp/got" "twin [x/twin.c],3
twin [y/twin.c],2"

# ---- labels of hand-written assembly, on the host
cc -g -O0 -finstrument-functions "$programs/labels_main.c" "$programs/labels.S" -o "$tmp/labels" ||
    { bad "building labels"; finish; }
[ "$(nm "$tmp/labels" | awk '$3 == "asm_spin" || $3 == "asm_weak_spin" { print $2 }' | tr -d '\n')" = TW ] &&
    ok "labels: asm_spin global, asm_weak_spin weak" || bad "labels: nm: $(nm "$tmp/labels" | grep asm_)"
"$np" record -o "$tmp/labels.t" -- "$tmp/labels" 10 >/dev/null 2>&1 || bad "record labels"
rows "$tmp/labels.t" >"$tmp/got"
same "labels: named, counted (report)" "$tmp/got" "asm_spin,3
asm_weak_spin,2
main,1"
"$np" record --sample=997 -o "$tmp/labels_s.t" -- "$tmp/labels" 1000000000 >/dev/null 2>&1 || bad "record --sample labels"
"$np" report --samples --format=json "$tmp/labels_s.t" 2>/dev/null >"$tmp/json"
spin=$(jq '[.functions[] | select(.name == "asm_spin") | .calls] | add // 0' "$tmp/json")
weak=$(jq '[.functions[] | select(.name == "asm_weak_spin") | .calls] | add // 0' "$tmp/json")
unnamed=$(jq -r --arg m "$tmp/labels" '[.functions[] | select(.module == $m and (.name | startswith("0x")))] | length' "$tmp/json")
[ "$spin" -gt 0 ] && [ "$weak" -gt 0 ] && [ "$unnamed" = 0 ] &&
    ok "labels: samples in asm_spin ($spin) and asm_weak_spin ($weak), none unnamed in the program" ||
    { bad "labels: samples: asm_spin $spin, asm_weak_spin $weak, $unnamed unnamed"; jq -c '.functions[] | [.name, .calls]' "$tmp/json"; }
cat "$tmp/json" >"$tmp/all"
"$np" tree --ascii "$tmp/labels.t" >>"$tmp/all" 2>&1
grep -q '_loop' "$tmp/all" && bad "labels: a local label named a function" || ok "labels: local labels name nothing"

# ---- labels in ARM firmware, ARM and Thumb code, under the emulator
"$np" emu -o "$tmp/fw" "$fw/labels.elf" >"$tmp/fw.out" 2>"$tmp/fw.err" || bad "emu labels: exit $?: $(cat "$tmp/fw.err")"
same_files "emu labels: its output" "$expected/labels.out" "$tmp/fw.out"
"$np" report --format=csv "$tmp/fw" 2>/dev/null | awk -F, 'NR > 1 && $2 > 0 { print $1, $2 }' | sort >"$tmp/got"
same_files "emu labels: every function named, its calls counted" "$expected/labels.calls" "$tmp/got"
# asm_sum(n) runs 3n + 3 instructions: n = 10, 20, 30; its loop's label cuts nothing
"$np" report --metric=count --format=csv "$tmp/fw" 2>/dev/null | awk -F, '$1 ~ /^asm_/ { print $1, $4 }' | sort >"$tmp/got"
same "emu labels: each label's own instructions" "$tmp/got" "asm_bump 6
asm_sum 189
asm_twice 8"
"$np" tree --ascii "$tmp/fw" >"$tmp/tree" 2>&1
sed -n 's/.*- //p' "$tmp/tree" >"$tmp/got"
same "emu labels: tree" "$tmp/got" "main
np_fw_put_uint
asm_sum
thumb_twice_all
asm_twice
asm_bump
np_fw_exit"
cat "$tmp/tree" "$tmp/fw.err" >"$tmp/all"
"$np" report "$tmp/fw" >>"$tmp/all" 2>&1
"$np" dump --format=folded "$tmp/fw" >>"$tmp/all" 2>&1
grep -qE '\$[atd]|asm_sum_loop|0x' "$tmp/all" && bad "emu labels: a mapping symbol, a local label or an address: $(grep -E '\$[atd]|_loop|0x' "$tmp/all")" ||
    ok "emu labels: no mapping symbol, local label nor address as a name"
"$np" emu -o "$tmp/fw_bad" "$fw/labels_bad.elf" >/dev/null 2>"$tmp/bad.err"
rc=$?
[ $rc = 1 ] && grep -qE '^nanoprof emu: error: undefined instruction .* at 0x[0-9a-f]{8} in asm_undef$' "$tmp/bad.err" &&
    ok "emu: the error names the label it stopped in" || bad "emu labels_bad: exit $rc: $(cat "$tmp/bad.err")"
finish
