#!/bin/sh
# test_cxx_names.sh NANOPROF CXX_PROG_SOURCE - C++ names, as people write
# them: tests/programs/cxx_prog.cc built with g++ and with clang++
# (-finstrument-functions) and recorded with `nanoprof record`. For each:
# every name report shows is one binutils' c++filt prints for a symbol of
# the program (`c++filt -p`, or the whole signature for the overloads);
# exact names and call counts in report, graph (graph TRACE
# 'Parser::parse'), tree, replay, dump --format=chrome (jq), folded and
# callgrind (callgrind_annotate), and gprof reading the gmon.out; -F and
# -N by the short name, the signature and the mangled name, at record and
# in the views; --no-demangle shows the mangled names.
set -u
np=$1
src=$2
np_cmd=report
. "$(dirname "$0")/cli_test.sh"
for t in g++ clang++ nm c++filt jq callgrind_annotate gprof; do
    command -v $t >/dev/null 2>&1 || { echo "FAIL $t is not installed (scripts/deps.sh installs it)"; exit 1; }
done
export LC_ALL=C

# own TRACE [OPTIONS...]: "name,calls" of the program's own functions
# (not the C++ library's templates), sorted
own() {
    own_trace=$1
    shift
    "$np" report --format=csv "$@" "$own_trace" 2>"$tmp/own_err" | cut -d, -f1,2 |
        grep -E '^(main,|by_value,|Parser::|scale|twice<|_ZNK6Parser|_Z5scale|_Z5twice|_ZL8by_value)' | sort
}

for cxx in g++ clang++; do
    d=$tmp/$cxx
    mkdir -p "$d"
    prog=$d/cxx_prog
    if ! $cxx -g -O0 -finstrument-functions "$src" -o "$prog" 2>"$d/cc_err"; then
        bad "$cxx: build: $(cat "$d/cc_err")"
        continue
    fi
    "$prog" >"$d/direct"
    compares=$(sed -n 's/.*compares \([0-9]*\).*/\1/p' "$d/direct")
    t=$d/trace
    "$np" record -o "$t" -- "$prog" >"$d/out" 2>/dev/null || { bad "$cxx: record"; continue; }
    same_files "$cxx: the program's output under record" "$d/direct" "$d/out"

    # what binutils makes of the program's symbols
    nm --defined-only "$prog" | awk '{ print $3 }' >"$d/syms"
    { c++filt -p <"$d/syms" | sed 's/\[abi:[^]]*\]//g'; c++filt <"$d/syms"; } | sort -u >"$d/known"
    parse_mangled=$(grep '^_ZNK6Parser5parse' "$d/syms")
    [ "$(echo "$parse_mangled" | c++filt -p)" = Parser::parse ] && [ "$(echo _Z5scalei | c++filt)" = "scale(int)" ] &&
        ok "$cxx: c++filt names Parser::parse and scale(int) so" || bad "$cxx: c++filt: '$parse_mangled'"
    "$np" report --format=json "$t" 2>/dev/null | jq -r '.functions[].name' | sort >"$d/shown"
    n=$(wc -l <"$d/shown")
    comm -23 "$d/shown" "$d/known" >"$d/unknown"
    if [ "$n" -gt 50 ] && [ ! -s "$d/unknown" ]; then ok "$cxx: all $n names shown are c++filt's"; else
        bad "$cxx: names c++filt does not give ($n shown):"; head "$d/unknown"; fi

    # ---- exact names and counts, every view
    own "$t" >"$d/own"
    same "$cxx: report" "$d/own" "Parser::parse,9
by_value,$compares
main,1
scale(double),1
scale(int),3
twice<double>,1
twice<int>,3"
    [ "$compares" -gt 5 ] && ok "$cxx: std::sort compared $compares times" || bad "$cxx: compares '$compares'"
    "$np" report --format=json "$t" 2>/dev/null |
        jq -r '.functions[] | select(.symbol == "scale") | [.name, .signature, .mangled] | join("|")' | sort >"$d/json"
    same "$cxx: report json: name, signature, mangled" "$d/json" "scale(double)|scale(double)|_Z5scaled
scale(int)|scale(int)|_Z5scalei"

    "$np" graph "$t" 'Parser::parse' >"$d/graph" 2>"$d/graph_err"
    rc=$?
    grep -E '^ +[0-9.]+ [a-z]+ +9/9 +main \[[0-9]+\]$' "$d/graph" >/dev/null &&
        grep -E '^\[[0-9]+\] .* 9 +Parser::parse \[[0-9]+\]$' "$d/graph" >/dev/null && [ $rc = 0 ] &&
        [ "$(grep -c '^\[' "$d/graph")" = 1 ] && ok "$cxx: graph TRACE 'Parser::parse': its entry, 9/9 from main" ||
        { bad "$cxx: graph Parser::parse (exit $rc)"; cat "$d/graph" "$d/graph_err"; }
    for name in 'scale(int)' _Z5scalei; do
        "$np" graph "$t" "$name" >"$d/graph" 2>/dev/null
        [ "$(grep -c '^\[' "$d/graph")" = 1 ] && grep -qE '^\[[0-9]+\] .* 3 +scale\(int\) \[[0-9]+\]$' "$d/graph" &&
            ok "$cxx: graph TRACE '$name': the entry of scale(int) alone" || { bad "$cxx: graph '$name'"; cat "$d/graph"; }
    done

    "$np" tree --ascii "$t" 2>/dev/null | grep -E '[-] (Parser::parse|scale\(.*\)|twice<.*>)$' |
        awk '{ print $NF, $1 }' | sort >"$d/tree"
    same "$cxx: tree" "$d/tree" "Parser::parse 9
scale(double) 1
scale(int) 3
twice<double> 1
twice<int> 3"

    "$np" replay "$t" >"$d/replay" 2>/dev/null
    [ "$(grep -c ' Parser::parse {$' "$d/replay")" = 9 ] && [ "$(grep -c '} /\* Parser::parse \*/$' "$d/replay")" = 9 ] &&
        [ "$(grep -cE ' twice<int>$' "$d/replay")" = 3 ] && ok "$cxx: replay: 9 calls of Parser::parse, 3 of twice<int>" ||
        bad "$cxx: replay: $(grep -c 'Parser::parse' "$d/replay") lines of Parser::parse"

    "$np" dump --format=chrome -o "$d/chrome.json" "$t" 2>/dev/null
    jq -r '[.traceEvents[] | select(.ph == "B") | .name] | group_by(.) | map("\(.[0]) \(length)") | .[]' \
        "$d/chrome.json" | grep -E '^(Parser::parse|scale|twice<.*>|by_value) ' >"$d/chrome"
    same "$cxx: chrome: the calls' names (overloads by the short name)" "$d/chrome" "Parser::parse 9
by_value $compares
scale 4
twice<double> 1
twice<int> 3"

    "$np" dump --format=folded "$t" >"$d/folded" 2>/dev/null
    grep -qE '^main;Parser::parse [0-9]+$' "$d/folded" && grep -qE '^main;scale\(int\) [0-9]+$' "$d/folded" &&
        grep -qE '^main;scale\(double\) [0-9]+$' "$d/folded" && ok "$cxx: folded: main;Parser::parse, main;scale(int)" ||
        bad "$cxx: folded: $(grep -E 'Parser|scale' "$d/folded")"

    "$np" dump --format=callgrind -o "$d/callgrind.out" "$t" 2>/dev/null
    # (from a directory no source file is in: it shortens the names of
    # those under its working directory, but not their callers')
    (cd "$d" && callgrind_annotate --tree=caller --threshold=100 callgrind.out >cga 2>cga_err)
    for want in 'main (9x)|Parser::parse' 'main (3x)|scale(int)' 'main (1x)|scale(double)'; do
        caller=${want%|*} callee=${want#*|}
        awk -v c=":$caller " -v f=":$callee " 'index($0, "<") && index($0, c) { hold = 1; next }
            hold && index($0, "*") && index($0, f) { found = 1 } { hold = 0 } END { exit !found }' "$d/cga" &&
            ok "$cxx: callgrind_annotate: $callee called by $caller" ||
            { bad "$cxx: callgrind_annotate: $callee by $caller"; grep -B3 -F "*  " "$d/cga" | grep -B3 -F ":$callee " | head -8; }
    done

    "$np" dump --format=gmon -o "$d/gmon.out" "$t" 2>/dev/null
    gprof -b -p "$prog" "$d/gmon.out" >"$d/gprof" 2>&1
    grep -qE ' 9 .* Parser::parse\(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&\) const$' \
        "$d/gprof" && grep -qE ' 3 .* scale\(int\)$' "$d/gprof" && ok "$cxx: gprof names the gmon.out's functions" ||
        { bad "$cxx: gprof"; grep -E 'parse|scale' "$d/gprof"; }

    # ---- filters in the views: short name, signature, mangled name
    own "$t" -F 'Parser::parse' >"$d/got"
    same "$cxx: report -F Parser::parse" "$d/got" "Parser::parse,9"
    own "$t" -F "$parse_mangled" >"$d/got"
    same "$cxx: report -F MANGLED" "$d/got" "Parser::parse,9"
    own "$t" -F 'scale(double)' >"$d/got"
    same "$cxx: report -F 'scale(double)'" "$d/got" "scale(double),1"
    own "$t" -N _Z5scalei -N 'twice<*' -N 'Parser::parse(std::__cxx11::basic_string*' >"$d/got"
    same "$cxx: report -N by mangled name, short name and signature" "$d/got" "by_value,$compares
main,1
scale(double),1"

    # ---- filters at record
    "$np" record -F 'Parser::*' -o "$d/tf" -- "$prog" >/dev/null 2>&1
    own "$d/tf" >"$d/got"
    same "$cxx: record -F 'Parser::*'" "$d/got" "Parser::parse,9"
    "$np" record -F "_ZNK6Parser5parse*" -o "$d/tf2" -- "$prog" >/dev/null 2>&1
    own "$d/tf2" >"$d/got"
    same "$cxx: record -F MANGLED*" "$d/got" "Parser::parse,9"
    "$np" record -N 'scale(int)' -N _Z5twiceIdET_S0_ -N 'Parser::parse' -o "$d/tn" -- "$prog" >/dev/null 2>&1
    own "$d/tn" >"$d/got"
    same "$cxx: record -N by signature, mangled and short name (scale alone: no longer an overload)" "$d/got" \
        "by_value,$compares
main,1
scale,1
twice<int>,3"

    # ---- a pattern the trace has no calls of: searched in the ELF files
    # by the demangled names too, at record and in a view
    "$np" record -F 'Parser::parse' -F 'Parser::nonesuch*' -o "$d/tu" -- "$prog" >/dev/null 2>"$d/tu_err"
    grep -q "^nanoprof record: -F 'Parser::nonesuch\*': matches no function" "$d/tu_err" &&
        ! grep -q "'Parser::parse'" "$d/tu_err" && ok "$cxx: record: the pattern that matched nothing, not the other" ||
        bad "$cxx: record's unmatched patterns: $(cat "$d/tu_err")"
    "$np" report -F 'Parser::parse' "$d/tn" >/dev/null 2>"$d/tv_err"
    grep -q "warning: -F 'Parser::parse': matches [1-9][0-9]* functions\{0,1\} of .*ELF files, but none the trace has calls of" \
        "$d/tv_err" && ok "$cxx: report: a demangled pattern found in the ELF files, not in the trace" ||
        bad "$cxx: report -F 'Parser::parse' on a trace without it: $(cat "$d/tv_err")"

    # ---- the raw names
    own "$t" --no-demangle >"$d/got"
    printf '%s\n' "$parse_mangled,9" _Z5scaled,1 _Z5scalei,3 _Z5twiceIdET_S0_,1 _Z5twiceIiET_S0_,3 \
        "_ZL8by_valueii,$compares" main,1 | sort >"$d/want"
    same_files "$cxx: --no-demangle" "$d/want" "$d/got"
    "$np" tree --ascii --no-demangle "$t" 2>/dev/null | grep -c '_ZN' >"$d/got"
    [ "$(cat "$d/got")" -gt 20 ] && ok "$cxx: tree --no-demangle" || bad "$cxx: tree --no-demangle: $(cat "$d/got") mangled"
done
finish
