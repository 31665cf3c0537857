#!/bin/sh
# test_flame_cli.sh NANOPROF GEN SCRIPT_RUN - `nanoprof flame` end to end on
# the traces test_analyze_gen writes (numbers in tests/trace_builder.h):
# the SVG parses (xmllint), one frame per tree node with the exact names,
# calls and times, exact widths and heights, the options, hostile names
# still giving valid XML, the embedded script run in node against the
# SVG's own elements (flame_script_run.js), exit codes and one-line
# errors, and an output file that is whole or absent.
set -u
np=$1
gen=$2
script_run=$3
np_cmd=flame
. "$(dirname "$0")/cli_test.sh"
need xmllint node
# valid NAME FILE: xmllint parses it
valid() {
    if xmllint --noout "$2" 2>"$tmp/xmlerr"; then ok "$1"; else bad "$1"; cat "$tmp/xmlerr"; fi
}
# xpath FILE EXPR: the string value of EXPR (SVG elements by local name)
xpath() { xmllint --xpath "$2" "$1" 2>/dev/null; }
# titles FILE: every frame's tooltip, one a line
titles() {
    xmllint --xpath '//*[local-name()="g"][@class="frame"]/*[local-name()="title"]/text()' "$1"
}
# geometry FILE: "id parent x y width label" per frame line
geometry() {
    sed -n 's/^<g class="frame" id="\([^"]*\)" data-parent="\([^"]*\)">.*<rect x="\([^"]*\)" y="\([^"]*\)" width="\([^"]*\)".*<text[^>]*>\([^<]*\)<\/text><\/g>$/\1 \2 \3 \4 \5 \6/p' "$1"
}

for kind in sample truncated corrupt hostile; do
    "$gen" "$kind" "$tmp/$kind" >/dev/null || { echo "FAIL generating $kind"; exit 1; }
done

# ---- the sample trace: frames, names, numbers ----
run "$tmp/sample" -o "$tmp/s.svg" --width=300
status "sample: exit 0, quiet" 0
[ -s "$tmp/out" ] && bad "sample: nothing on stdout" || ok "sample: nothing on stdout"
valid "sample: xmllint parses it" "$tmp/s.svg"
titles "$tmp/s.svg" >"$tmp/titles"
same "sample: one frame per node, exact calls and times" "$tmp/titles" \
"all (calls 4, total 280 ns, self 0 ns, 100.00%)
4242/100 main (calls 2, total 200 ns, self 0 ns, 71.43%)
sample_main (calls 1, total 100 ns, self 50 ns, 35.71%)
sample_helper (calls 1, total 50 ns, self 20 ns, 17.86%)
sample_leaf (calls 1, total 30 ns, self 30 ns, 10.71%)
sample_fib (calls 1, total 100 ns, self 65 ns, 35.71%)
sample_fib (calls 2, total 35 ns, self 25 ns, 12.50%)
sample_fib (calls 1, total 10 ns, self 10 ns, 3.57%)
4242/101 worker (calls 2, total 80 ns, self 0 ns, 28.57%)
sample_square (calls 1, total 40 ns, self 30 ns, 14.29%)
0x10 (calls 1, total 10 ns, self 10 ns, 3.57%)
sample_twice (calls 1, total 40 ns, self 30 ns, 14.29%)
sample_square (calls 1, total 10 ns, self 10 ns, 3.57%)"
# 300 px wide, 10 px margins: 280 px for 280 ns, one pixel per ns; the
# deepest frames (depth 4) at the top (y 52), 16 px a level
geometry "$tmp/s.svg" >"$tmp/geom"
same "sample: x, y, widths in proportion to inclusive times, labels cut to fit" "$tmp/geom" \
"f0 -1 10 116 280 all
f1 0 10 100 200 4242/100 main
f2 1 10 84 100 sample_main
f3 2 10 68 50 samp..
f4 3 10 52 30 s..
f5 1 110 84 100 sample_fib
f6 5 110 68 35 sa..
f7 6 110 52 10 
f8 0 210 100 80 4242/101..
f9 8 210 84 40 sa..
f10 9 210 68 10 
f11 8 250 84 40 sa..
f12 11 250 68 10 "
[ "$(xpath "$tmp/s.svg" 'string(/*/@height)')" = 160 ] && ok "sample: height 52 + 5 levels + 28" ||
    bad "sample: height"
n=$(xpath "$tmp/s.svg" 'count(//*[local-name()="g"][@class="frame"])')
nr=$(xpath "$tmp/s.svg" 'count(//*[local-name()="g"][@class="frame"][*[local-name()="title"] and *[local-name()="rect"] and *[local-name()="text"]])')
[ "$n" = 13 ] && [ "$nr" = 13 ] && ok "sample: 13 frames, each with title, rect, text" || bad "sample: frames $n/$nr"
fills=$(sed -n 's/.*<title>\(sample_[a-z]*\) (.*fill="\([^"]*\)".*/\1 \2/p' "$tmp/s.svg" | sort -u)
if [ "$(printf '%s\n' "$fills" | wc -l)" = 6 ] && [ "$(printf '%s\n' "$fills" | cut -d' ' -f1 | sort -u | wc -l)" = 6 ] &&
    printf '%s\n' "$fills" | grep -q '^sample_fib rgb(2[0-5][0-9],[0-9]*,[0-9]*)$'; then
    ok "sample: one warm colour per function name"
else
    bad "sample: colours"; printf '%s\n' "$fills"
fi
"$np" flame "$tmp/sample" -o "$tmp/s2.svg" --width=300 && cmp -s "$tmp/s.svg" "$tmp/s2.svg" &&
    ok "sample: the same SVG twice" || bad "sample: the same SVG twice"
mode=$(umask 022 && "$np" flame "$tmp/sample" -o "$tmp/mode.svg" && stat -c %a "$tmp/mode.svg")
[ "$mode" = 644 ] && ok "sample: file mode as umask 022 makes it" || bad "sample: file mode $mode"

# ---- what the script relies on ----
[ "$(xpath "$tmp/s.svg" 'count(/*[local-name()="svg"]/*[local-name()="script"])')" = 1 ] &&
    grep -q '^<script type="text/ecmascript"><!\[CDATA\[$' "$tmp/s.svg" && ok "script: one, in CDATA" ||
    bad "script: one, in CDATA"
missing=
for id in frames unzoom search details matched title subtitle; do
    [ "$(xpath "$tmp/s.svg" "count(//*[@id='$id'])")" = 1 ] || missing="$missing $id"
    grep -q "getElementById('$id')" "$tmp/s.svg" || case $id in title | subtitle) ;; *) missing="$missing $id(script)" ;; esac
done
for attr in data-xpad data-usable data-charw; do
    [ -n "$(xpath "$tmp/s.svg" "string(/*/@$attr)")" ] || missing="$missing @$attr"
done
[ "$(xpath "$tmp/s.svg" 'string(/*/@data-usable)')" = 280 ] || missing="$missing usable"
[ -z "$missing" ] && ok "script: the elements and attributes it uses exist" || bad "script: missing$missing"
# node runs the script (need, above: scripts/deps.sh installs nodejs)
node "$script_run" "$tmp/s.svg" >"$tmp/js" 2>&1
same "script: zoom, reset, search, keys (in node)" "$tmp/js" \
"# loaded
13 frames
unzoom=button hide search=Search matched= details= 
# mouse over f3
(frames as loaded)
unzoom=button hide search=Search matched= details=sample_helper (calls 1, total 50 ns, self 20 ns, 17.86%)
# click f3
f0 frame parent 10 280 rgb(200,200,190) all
f1 frame parent 10 280 rgb(200,200,190) 4242/100 main
f2 frame parent 10 280 rgb(212,40,23) sample_main
f3 frame 10 280 rgb(215,19,28) sample_helper
f4 frame 10 168 rgb(212,135,27) sample_leaf
hidden: f5 f6 f7 f8 f9 f10 f11 f12
unzoom=button search=Search matched= details= 
# click f0
(frames as loaded)
unzoom=button hide search=Search matched= details= 
# click f6
f0 frame parent 10 280 rgb(200,200,190) all
f1 frame parent 10 280 rgb(200,200,190) 4242/100 main
f5 frame parent 10 280 rgb(224,15,39) sample_fib
f6 frame 10 280 rgb(224,15,39) sample_fib
f7 frame 10 80 rgb(224,15,39) sample_fib
hidden: f2 f3 f4 f8 f9 f10 f11 f12
unzoom=button search=Search matched= details= 
# click f1 (an ancestor)
f0 frame parent 10 280 rgb(200,200,190) all
f1 frame 10 280 rgb(200,200,190) 4242/100 main
f2 frame 10 140 rgb(212,40,23) sample_main
f3 frame 10 70 rgb(215,19,28) sample..
f4 frame 10 42 rgb(212,135,27) sam..
f5 frame 150 140 rgb(224,15,39) sample_fib
f6 frame 150 49 rgb(224,15,39) sam..
f7 frame 150 14 rgb(224,15,39) 
hidden: f8 f9 f10 f11 f12
unzoom=button search=Search matched= details= 
# click unzoom
(frames as loaded)
unzoom=button hide search=Search matched= details= 
# click f8
f0 frame parent 10 280 rgb(200,200,190) all
f8 frame 10 280 rgb(200,200,190) 4242/101 worker
f9 frame 10 140 rgb(218,67,30) sample_square
f10 frame 10 35 rgb(227,152,25) 0x10
f11 frame 150 140 rgb(205,13,0) sample_twice
f12 frame 150 35 rgb(218,67,30) sa..
hidden: f1 f2 f3 f4 f5 f6 f7
unzoom=button search=Search matched= details= 
# search ^sample_(fib|leaf)\$ (zoomed)
f0 frame parent 10 280 rgb(200,200,190) all
f8 frame 10 280 rgb(200,200,190) 4242/101 worker
f9 frame 10 140 rgb(218,67,30) sample_square
f10 frame 10 35 rgb(227,152,25) 0x10
f11 frame 150 140 rgb(205,13,0) sample_twice
f12 frame 150 35 rgb(218,67,30) sa..
hidden: f1 f2 f3 f4 f5 f6 f7
unzoom=button search=Reset Search matched=Matched: 46.4% details= 
# click unzoom (searching)
f4 frame 10 30 rgb(230,0,230) s..
f5 frame 110 100 rgb(230,0,230) sample_fib
f6 frame 110 35 rgb(230,0,230) sa..
f7 frame 110 10 rgb(230,0,230) 
unzoom=button hide search=Reset Search matched=Matched: 46.4% details= 
# escape
(frames as loaded)
unzoom=button hide search=Search matched= details= 
# ctrl-f [ (default prevented)
(frames as loaded)
unzoom=button hide search=Search matched=bad regular expression details= "

# ---- options ----
run "$tmp/sample" -o "$tmp/w.svg"
status "default width: exit 0" 0
geometry "$tmp/w.svg" | sed -n '3p;6p;11p' | cut -d' ' -f1,3,5 >"$tmp/geom"
same "default width 1200: 1180 px for 280 ns" "$tmp/geom" "f2 10 421.429
f5 431.429 421.429
f10 852.857 42.143"
run "$tmp/sample" -o "$tmp/i.svg" --width=300 --inverted
status "--inverted: exit 0" 0
valid "--inverted: parses" "$tmp/i.svg"
geometry "$tmp/i.svg" | cut -d' ' -f1,4 | tr '\n' ' ' >"$tmp/geom"; echo >>"$tmp/geom"
same "--inverted: the root at the top" "$tmp/geom" "f0 52 f1 68 f2 84 f3 100 f4 116 f5 84 f6 100 f7 116 f8 68 f9 84 f10 100 f11 84 f12 100 "
[ "$(xpath "$tmp/i.svg" 'string(//*[@id="title"])')" = "Icicle Graph" ] && ok "--inverted: title" || bad "--inverted: title"
run "$tmp/sample" -o "$tmp/m.svg" --width=300 --min-width=10%
status "--min-width=10%: exit 0" 0
geometry "$tmp/m.svg" | cut -d' ' -f1,2,5 | tr '\n' ' ' >"$tmp/geom"; echo >>"$tmp/geom"
same "--min-width=10%: frames under 28 ns left out" "$tmp/geom" "f0 -1 280 f1 0 200 f2 1 100 f3 2 50 f4 3 30 f5 1 100 f6 5 35 f7 0 80 f8 7 40 f9 7 40 "
[ "$(xpath "$tmp/m.svg" 'string(//*[@id="subtitle"])')" = "$tmp/sample, wall time; 3 frames narrower than 10% left out" ] &&
    ok "--min-width=10%: counted in the subtitle" || bad "--min-width=10%: subtitle: $(xpath "$tmp/m.svg" 'string(//*[@id="subtitle"])')"
run "$tmp/sample" -o "$tmp/m.svg" --width=300 --min-width=40
status "--min-width=40 (px): exit 0" 0
geometry "$tmp/m.svg" | cut -d' ' -f1,5 | tr '\n' ' ' >"$tmp/geom"; echo >>"$tmp/geom"
same "--min-width=40: frames under 40 px left out, subtrees with them" "$tmp/geom" "f0 280 f1 200 f2 100 f3 50 f4 100 f5 80 f6 40 f7 40 "
grep -q '^<!-- flame graph written by nanoprof: 8 frames, 5 omitted -->$' "$tmp/m.svg" && ok "--min-width=40: 5 omitted" ||
    bad "--min-width=40: 5 omitted"
run "$tmp/sample" -o "$tmp/t.svg" "--title=a <b> & \"c\""
status "--title: exit 0" 0
valid "--title: markup escaped" "$tmp/t.svg"
[ "$(xpath "$tmp/t.svg" 'string(//*[@id="title"])')" = 'a <b> & "c"' ] && ok "--title: the text" || bad "--title: the text"
run "$tmp/sample" -o "$tmp/tid.svg" --tid=101 --width=300
status "--tid=101: exit 0" 0
titles "$tmp/tid.svg" | head -n 2 >"$tmp/titles"
same "--tid=101: one thread" "$tmp/titles" "all (calls 2, total 80 ns, self 0 ns, 100.00%)
4242/101 worker (calls 2, total 80 ns, self 0 ns, 100.00%)"
run "$tmp/sample" -o "$tmp/none.svg" --tid=999
status "--tid=999 (no calls): exit 0" 0
valid "no calls: parses" "$tmp/none.svg"
titles "$tmp/none.svg" >"$tmp/titles"
same "no calls: only all" "$tmp/titles" "all (calls 0, total 0 ns, self 0 ns, 0.00%)"
run "$tmp/sample" -o - --width=300
status "-o -: exit 0" 0
cmp -s "$tmp/out" "$tmp/s.svg" && ok "-o -: the same SVG on stdout" || bad "-o -: the same SVG on stdout"

# ---- hostile names: markup, a control character, bytes that are not UTF-8 ----
run "$tmp/hostile" -o "$tmp/h.svg"
status "hostile: exit 0" 0
valid "hostile: still valid XML" "$tmp/h.svg"
fffd=$(printf '\357\277\275')
want=$(printf 'x<&">'"'"'?%s%s]]>%s(%s--y (calls 1, total 100 ns, self 80 ns, 100.00%%)' "$fffd" "$fffd" "$fffd" "$fffd")
[ "$(xpath "$tmp/h.svg" 'string(//*[@id="f2"]/*[local-name()="title"])')" = "$want" ] &&
    ok "hostile: function name escaped, bad bytes replaced" ||
    { bad "hostile: function name"; xpath "$tmp/h.svg" 'string(//*[@id="f2"]/*[local-name()="title"])' | od -c; }
want=$(printf '4343/7 t<&>"%s? (calls 1, total 100 ns, self 0 ns, 100.00%%)' "$fffd")
[ "$(xpath "$tmp/h.svg" 'string(//*[@id="f1"]/*[local-name()="title"])')" = "$want" ] &&
    ok "hostile: thread name escaped" || bad "hostile: thread name"
[ "$(xpath "$tmp/h.svg" 'string(//*[@id="f3"]/*[local-name()="title"])')" = \
    "sample_main (calls 1, total 20 ns, self 20 ns, 20.00%)" ] && ok "hostile: the callee beside it" ||
    bad "hostile: the callee beside it"
run "$tmp/hostile" -o "$tmp/h2.svg" --width=100
status "hostile, cut labels: exit 0" 0
valid "hostile, cut labels: valid XML" "$tmp/h2.svg"

# ---- damaged traces ----
run "$tmp/truncated" -o "$tmp/cut.svg"
status_loss "truncated: exit 0, the reader's warning, the loss" 0 "warning: .*file cut short" "1 of 1 trace file cut short"
valid "truncated: what was read" "$tmp/cut.svg"
run "$tmp/corrupt" -o "$tmp/bad.svg"
[ "$rc" = 1 ] && ok "corrupt: exit 1" || bad "corrupt: exit $rc"
valid "corrupt: what was read" "$tmp/bad.svg"
run "$tmp/nothing" -o "$tmp/nothing.svg"
status "no trace: exit 1" 1 "nanoprof flame: "
[ -e "$tmp/nothing.svg" ] && bad "no trace: no file" || ok "no trace: no file"

# ---- output that cannot be written: one line, exit 1, nothing left behind ----
run "$tmp/sample" -o /nonexistent/dir/x.svg
status "-o in a missing directory: exit 1" 1 "nanoprof flame: cannot write /nonexistent/dir/x.svg: No such file or directory"
run "$tmp/sample" -o "$tmp/s.svg/x.svg"
status "-o under a file: exit 1" 1 "cannot write .*: Not a directory"
mkdir "$tmp/outdir" "$tmp/outdir/taken.svg"
run "$tmp/sample" -o "$tmp/outdir/taken.svg"
status "-o a directory: exit 1" 1 "cannot write .*taken.svg: Is a directory"
[ "$(ls -A "$tmp/outdir")" = taken.svg ] && ok "-o a directory: no temporary file left" ||
    bad "-o a directory: left $(ls -A "$tmp/outdir")"
cp "$tmp/s.svg" "$tmp/outdir/keep.svg"
run "$tmp/nothing" -o "$tmp/outdir/keep.svg"
[ "$rc" = 1 ] && cmp -s "$tmp/s.svg" "$tmp/outdir/keep.svg" && [ "$(ls -A "$tmp/outdir" | wc -l)" = 2 ] &&
    ok "failed load: the old file intact, nothing left" || bad "failed load: old file or leftovers"
ln -s keep.svg "$tmp/outdir/link.svg"
run "$tmp/sample" -o "$tmp/outdir/link.svg"
[ "$rc" = 0 ] && [ -L "$tmp/outdir/link.svg" ] && cmp -s "$tmp/w.svg" "$tmp/outdir/keep.svg" &&
    ok "-o a symbolic link: the file it names replaced, the link kept" || bad "-o a symbolic link"
mkfifo "$tmp/outdir/pipe"
cat "$tmp/outdir/pipe" >"$tmp/piped" &
run "$tmp/sample" -o "$tmp/outdir/pipe" --width=300
wait
[ "$rc" = 0 ] && [ -p "$tmp/outdir/pipe" ] && cmp -s "$tmp/s.svg" "$tmp/piped" &&
    ok "-o a pipe: written through, not replaced" || bad "-o a pipe"
if [ -w /dev/full ]; then
    "$np" flame "$tmp/sample" -o - >/dev/full 2>"$tmp/err"
    rc=$?
    status "-o - to a full device: exit 1" 1 "nanoprof flame: writing the output failed"
fi

# ---- usage ----
run "$tmp/sample"
status "no -o: exit 2" 2 "nanoprof flame: no output file"
run "$tmp/sample" -o "$tmp/x.svg" --width=50
status "--width=50: exit 2" 2 "bad --width '50'"
run "$tmp/sample" -o "$tmp/x.svg" --width=12px
status "--width=12px: exit 2" 2 "bad --width"
run "$tmp/sample" -o "$tmp/x.svg" --min-width=5%%
status "--min-width=5%%: exit 2" 2 "bad --min-width"
run "$tmp/sample" -o "$tmp/x.svg" --min-width=-1
status "--min-width=-1: exit 2" 2 "bad --min-width"
run "$tmp/sample" -o "$tmp/x.svg" --bogus
status "unknown option: exit 2" 2 "unknown option '--bogus'"
run "$tmp/sample" "$tmp/sample" -o "$tmp/x.svg"
status "two paths: exit 2" 2 "unexpected argument"
run -o
status "-o without a value: exit 2" 2 "needs a value"
[ -e "$tmp/x.svg" ] && bad "usage errors: no file" || ok "usage errors: no file"
run --help
status "--help: exit 0" 0
head -n 1 "$tmp/out" | grep -q '^usage: nanoprof flame \[PATH\] -o FILE.svg' && grep -q -- '--inverted' "$tmp/out" &&
    grep -q -- '--tid=LIST' "$tmp/out" && ok "--help: usage, own and common options" || bad "--help: text"
"$np" --help | grep -q '^  flame ' && ok "nanoprof --help lists flame" || bad "nanoprof --help lists flame"

finish
