#!/bin/sh
# bench_docs.sh - the figures of README.md and docs/*.md, taken from the
# output of `make bench` (bench/run.sh writes it to build/bench.out):
#
#   sh scripts/bench_docs.sh update BENCH_OUTPUT  the docs from a whole run
#   sh scripts/bench_docs.sh check                are the docs the block's?
#   sh scripts/bench_docs.sh value KEY [BENCH_OUTPUT]
#   sh scripts/bench_docs.sh keys [BENCH_OUTPUT]  every KEY and its value
#
# A figure the docs quote is written between markers, on one line:
#     <!-- bench:calls.cost_clock2 -->1.01-1.13<!-- /bench -->x
# Each KEY is defined once, in bench/figures.txt, as how its value is
# taken from a bench output (that file's header says how).
# docs/performance.md keeps the whole output of the last run in a fenced
# block between the lines <!-- bench:output --> and <!-- /bench:output -->:
# the figures are checked against it, and value and keys read it unless
# given a file.
#
# update: puts BENCH_OUTPUT (a whole run: "parts all" on its run: line,
# and its end: line) in that block, rewrites every marker from it, then
# checks. check: one line per problem, exit 1 if any: a marker whose value
# is not what its KEY gives from the block; a KEY that is unknown or gives
# no value; a marker not closed on its line; a figure (a number and a
# unit: x, ns, us, ms, s, KiB, MB, bytes, instructions, MIPS, %, ...) in
# the prose of README.md or docs/*.md (code blocks, `code` and link
# targets apart) outside a marker and not allowed by bench/figures.allow
# (the text whose figures are limits, sizes in a format, defaults,
# targets, arithmetic or examples: not measurements).
#
# NP_DOCS_ROOT (default: this repository) is the tree to read and write.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${NP_DOCS_ROOT:-$(cd "$HERE/.." && pwd)}
PERF=$ROOT/docs/performance.md
KEYS=$ROOT/bench/figures.txt
ALLOW=$ROOT/bench/figures.allow
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npdocs.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM

die() { echo "bench_docs.sh: $*" >&2; exit 1; }
[ -f "$KEYS" ] || die "no $KEYS"

# block FILE: the bench output kept in FILE's block (docs/performance.md)
block() {
    awk '/^<!-- bench:output -->$/ { on = 1; next } /^<!-- \/bench:output -->$/ { on = 0 }
         on && /^```/ { fence = !fence; next } on && fence' "$1"
}

# values OUTPUT: "KEY<TAB>VALUE" of every key of bench/figures.txt in
# $TMP/values, taken from OUTPUT; a key that gives no value has an empty
# VALUE and a line "KEY: why" in $TMP/errors. Exits 1 on a bad table.
values() {
    awk -v errors="$TMP/errors" -v values="$TMP/values" '
    FNR == NR { out[++no] = $0; next }
    /^[ \t]*(#|$)/ { next }
    {
        key = $1
        pipe = substr($0, index($0, key) + length(key))
        if (key !~ /^[A-Za-z0-9_.-]+$/ || key == "output") { print "bench/figures.txt:" FNR ": bad key name " key > "/dev/stderr"; bad = 1; next }
        if (key in seen) { print "bench/figures.txt:" FNR ": " key " defined twice" > "/dev/stderr"; bad = 1; next }
        seen[key] = 1
        err = ""
        v = evaluate(pipe)
        if (err != "") { print key ": " err > errors; v = "" }
        printf "%s\t%s\n", key, v > values
    }
    END { exit bad }

    # tokens(S, T): the words of S in T[1..n], "..." a word with its blanks
    # (\" and \\ in it are " and \); the "|" between stages is a word
    function tokens(s, t,   n, i, c, w, inw, q) {
        n = 0; w = ""; inw = 0; q = 0
        for (i = 1; i <= length(s); i++) {
            c = substr(s, i, 1)
            if (q) {
                if (c == "\\" && (substr(s, i + 1, 1) == "\"" || substr(s, i + 1, 1) == "\\")) { w = w substr(s, ++i, 1); continue }
                if (c == "\"") { q = 0; continue }
                w = w c; continue
            }
            if (c == "\"") { q = 1; inw = 1; continue }
            if (c == " " || c == "\t") { if (inw) { t[++n] = w; w = ""; inw = 0 }; continue }
            w = w c; inw = 1
        }
        if (q) err = "a quote not closed"
        if (inw) t[++n] = w
        return n
    }
    function fieldof(line, spec,   f, k, n, j, p) {
        k = 0
        if (index(spec, "/")) { k = substr(spec, index(spec, "/") + 1) + 0; spec = substr(spec, 1, index(spec, "/") - 1) }
        n = split(line, f, /[ \t]+/)
        if (f[1] == "") { for (j = 1; j < n; j++) f[j] = f[j + 1]; n-- }
        j = spec < 0 ? n + 1 + spec : spec + 0
        if (j < 1 || j > n) return "(no field " spec ")"
        if (k) { split(f[j], p, "/"); return p[k] }
        return f[j]
    }
    function number(v) { return v ~ /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?[A-Za-z%)]*$/ }
    function evaluate(pipe,   t, n, i, j, k, cmd, na, a, nc, c, nd, d, on, va, vb, lo, hi, x, f, m, s, p) {
        n = tokens(pipe, t)
        nc = 0
        for (i = 1; i <= no; i++) c[++nc] = out[i]
        i = 1
        while (i <= n && err == "") {
            cmd = t[i++]; na = 0
            while (i <= n && t[i] != "|") a[++na] = t[i++]
            i++
            nd = 0
            if (cmd == "section") {            # section ERE: the "== " sections whose header matches
                on = 0
                for (j = 1; j <= nc; j++) { if (c[j] ~ /^== /) on = (c[j] ~ a[1]); if (on) d[++nd] = c[j] }
            } else if (cmd == "rows") {         # rows ERE: the lines that match
                for (j = 1; j <= nc; j++) if (c[j] ~ a[1]) d[++nd] = c[j]
            } else if (cmd == "col") {          # col N...: fields (-1 the last; N/K part K at "/")
                for (j = 1; j <= nc; j++) for (k = 1; k <= na; k++) d[++nd] = fieldof(c[j], a[k])
            } else if (cmd == "scale") {        # scale F (or A/B): each value times F
                f = a[1]
                if (index(f, "/")) { split(f, p, "/"); f = p[1] / p[2] }
                for (j = 1; j <= nc; j++) { if (!number(c[j])) { err = "not a number: " c[j]; break }; d[++nd] = sprintf("%.12g", c[j] * f) }
            } else if (cmd == "per") {          # per N M: field N / field M of each line
                for (j = 1; j <= nc; j++) {
                    va = fieldof(c[j], a[1]); vb = fieldof(c[j], a[2])
                    if (!number(va) || !number(vb) || vb + 0 == 0) { err = "no ratio in: " c[j]; break }
                    d[++nd] = sprintf("%.12g", va / vb)
                }
            } else if (cmd == "minus") {        # minus A B N: per section, field N of A less that of B
                va = vb = ""
                for (j = 1; j <= nc + 1; j++) {
                    if (j > nc || c[j] ~ /^== /) {
                        if (va != "" && vb != "") {
                            if (!number(va) || !number(vb)) { err = "not a number: " va " " vb; break }
                            d[++nd] = sprintf("%.12g", va - vb)
                        }
                        va = vb = ""
                        if (j > nc) break
                    }
                    if (c[j] ~ a[1]) va = fieldof(c[j], a[3])
                    if (c[j] ~ a[2]) vb = fieldof(c[j], a[3])
                }
            } else if (cmd == "cut") {          # cut SEP N: part N of each line split at the string SEP
                for (j = 1; j <= nc; j++) {
                    s = c[j]
                    for (k = 1; k < a[2] + 0 && (m = index(s, a[1])) > 0; k++) s = substr(s, m + length(a[1]))
                    if (k < a[2] + 0) { err = "no part " a[2] " in: " c[j]; break }
                    if ((m = index(s, a[1])) > 0) s = substr(s, 1, m - 1)
                    d[++nd] = s
                }
            } else if (cmd == "sub") {          # sub ERE TEXT: the first match replaced
                for (j = 1; j <= nc; j++) { s = c[j]; sub(a[1], a[2], s); d[++nd] = s }
            } else if (cmd == "first") {        # first: the first line, as it is
                if (nc < 1) err = "no line"; else return c[1]
            } else if (cmd == "one" || cmd == "range" || cmd == "min" || cmd == "max") {
                # FMT (printf): one value; lo-hi ("lo to hi" when one is
                # negative; one value when both print alike); the lowest; the highest
                if (nc < 1) { err = "no value"; break }
                if (cmd == "one" && nc != 1) { err = nc " values, one expected"; break }
                for (j = 1; j <= nc; j++) {
                    if (!number(c[j])) { err = "not a number: " c[j]; break }
                    x = c[j] + 0
                    if (j == 1 || x < lo) lo = x
                    if (j == 1 || x > hi) hi = x
                }
                if (err != "") break
                lo = sprintf(a[1], lo); hi = sprintf(a[1], hi)
                if (cmd == "min") return lo
                if (cmd == "max" || cmd == "one") return hi
                if (lo == hi) return lo
                return (lo ~ /^-/ || hi ~ /^-/) ? lo " to " hi : lo "-" hi
            } else {
                err = "no stage " cmd
                break
            }
            nc = nd
            for (j = 1; j <= nd; j++) c[j] = d[j]
        }
        if (err == "") err = "the last stage is not one, range, min, max or first"
        return ""
    }' "$1" "$KEYS"
}

docs() { # the files whose figures are kept
    ls "$ROOT/README.md" "$ROOT"/docs/*.md
}

# check_markers: every marker of the docs against $TMP/values
check_markers() {
    # shellcheck disable=SC2046
    awk -v root="$ROOT/" -v vals="$TMP/values" '
    BEGIN { while ((getline l < vals) > 0) { i = index(l, "\t"); v[substr(l, 1, i - 1)] = substr(l, i + 1) } }
    FNR == 1 { file = FILENAME; sub("^" root, "", file) }
    {
        s = $0
        while ((i = index(s, "<!-- bench:")) > 0) {
            s = substr(s, i)
            if (s ~ /^<!-- bench:output -->/) { s = substr(s, 12); continue }
            if (!match(s, /^<!-- bench:[A-Za-z0-9_.-]+ -->[^<]*<!-- \/bench -->/)) {
                printf "%s:%d: a marker not closed on its line: %s\n", file, FNR, substr(s, 1, 60); bad = 1
                s = substr(s, 12); continue
            }
            m = substr(s, RSTART, RLENGTH)
            s = substr(s, RLENGTH + 1)
            k = substr(m, 12); k = substr(k, 1, index(k, " ") - 1)
            val = substr(m, index(m, "-->") + 3); val = substr(val, 1, index(val, "<!--") - 1)
            if (!(k in v)) { printf "%s:%d: bench:%s is not a key of bench/figures.txt\n", file, FNR, k; bad = 1 }
            else if (v[k] == "") { printf "%s:%d: bench:%s gives no value from the bench output\n", file, FNR, k; bad = 1 }
            else if (val != v[k]) { printf "%s:%d: bench:%s says %s, the bench output gives %s\n", file, FNR, k, val, v[k]; bad = 1 }
        }
    }
    END { exit bad }' $(docs)
}

# unmarked: the figures of the prose outside markers and the allow-list
unmarked() {
    [ -f "$ALLOW" ] || die "no $ALLOW"
    # shellcheck disable=SC2046
    awk -v root="$ROOT/" -v allowf="$ALLOW" '
    BEGIN {
        while ((getline l < allowf) > 0) {
            if (l ~ /^#/ || l ~ /^[ \t]*$/ || !(i = index(l, ": "))) continue
            f = substr(l, 1, i - 1); a = substr(l, i + 2)
            if (a == "*") whole[f] = 1
            else { na[f]++; allowed[f, na[f]] = a }
        }
        num = "[0-9]+([.,][0-9]+)*"
        unit = "(x| ?(ns|us|ms|s|KiB|MiB|GiB|KB|MB|GB|kB|B|bytes|byte|instructions|insns|MIPS|%|pp|times|million|px|pixels))"
        fig = "(^|[^A-Za-z0-9_.^])" num "((-| to )" num ")?" unit "([^A-Za-z0-9_]|$)"
    }
    function blank(s, a, b,   r) { # s with its characters a..b made spaces
        r = sprintf("%" (b - a + 1) "s", "")
        return substr(s, 1, a - 1) r substr(s, b + 1)
    }
    function neutral(s,   t) { # markers, comments, code spans and link targets made spaces
        t = s
        while (match(t, /<!--[^>]*-->[^<]*<!-- \/bench -->/)) t = blank(t, RSTART, RSTART + RLENGTH - 1)
        while (match(t, /<!--([^-]|-[^-])*-->/)) t = blank(t, RSTART, RSTART + RLENGTH - 1)
        while (match(t, /`[^`]*`/)) t = blank(t, RSTART, RSTART + RLENGTH - 1)
        while (match(t, /\]\([^)]*\)/)) t = blank(t, RSTART + 1, RSTART + RLENGTH - 1)
        return t
    }
    function flush(   t, off, s, e, m, i, p, q, ok, ln, al) {
        if (para == "" || whole[file]) { para = ""; return }
        t = neutral(para)
        off = 0
        while (match(substr(t, off + 1), fig)) {
            s = off + RSTART; e = off + RSTART + RLENGTH - 1
            m = substr(t, s, RLENGTH)
            off = e
            if (m ~ /^[^0-9]/) { m = substr(m, 2); s++ }
            if (m ~ /[^A-Za-z%]$/) { m = substr(m, 1, length(m) - 1); e-- }
            ok = 0
            for (i = 1; i <= na[file] && !ok; i++) {
                al = allowed[file, i]; p = 0
                while ((q = index(substr(para, p + 1), al)) > 0) {
                    q += p
                    if (q <= s && q + length(al) - 1 >= e) { ok = 1; break }
                    p = q
                }
            }
            if (ok) continue
            ln = lline[1]
            for (i = 1; i <= nl; i++) if (lpos[i] <= s) ln = lline[i]
            printf "%s:%d: a figure outside a bench marker: %s (in: %s)\n", file, ln, m,
                   substr(para, (s > 30 ? s - 30 : 1), 70)
            bad = 1
        }
        para = ""
    }
    function add(s) {
        sub(/^[ \t]+/, "", s)
        if (para == "") { nl = 0; para = s }
        else para = para " " s
        lpos[++nl] = length(para) - length(s) + 1; lline[nl] = FNR
    }
    FNR == 1 { flush(); file = FILENAME; sub("^" root, "", file); fence = 0; prevblank = 1; icode = 0 }
    /^[ \t]*(```|~~~)/ { flush(); fence = !fence; next }
    fence { next }
    /^[ \t]*$/ { flush(); prevblank = 1; icode = 0; next }
    (/^    / || /^\t/) && (prevblank || icode) { icode = 1; next }
    { prevblank = 0; icode = 0 }
    /^#/ || /^[ \t]*\|/ || /^[ \t]*([-*+]|[0-9]+\.) / { flush() }
    { add($0) }
    /^#/ || /^[ \t]*\|/ { flush() }
    END { flush(); exit bad }' $(docs)
}

check() {
    block "$PERF" >"$TMP/block"
    if [ ! -s "$TMP/block" ]; then
        echo "docs/performance.md: no bench output between <!-- bench:output --> and <!-- /bench:output -->"
        return 1
    fi
    : >"$TMP/errors"
    values "$TMP/block" || return 1
    st=0
    if [ -s "$TMP/errors" ]; then
        sed 's/^\([^:]*\): /docs\/performance.md: block: \1: no value from the bench output: /' "$TMP/errors"
        st=1
    fi
    check_markers || st=1
    unmarked || st=1
    return $st
}

update() {
    out=$1
    [ -s "$out" ] || die "$out: no such file, or empty"
    grep -q '^run: .*; parts all;' "$out" || die "$out: not a run of every part (its run: line says which)"
    grep -q '^end: ' "$out" || die "$out: the run did not end (no end: line)"
    # the block: the output as it is, trailing blanks trimmed
    sed 's/[ \t]*$//' "$out" >"$TMP/new"
    if grep -q '^```' "$TMP/new"; then die "$out: a line starts with \`\`\`: it cannot go in a fenced block"; fi
    : >"$TMP/errors"
    values "$TMP/new" || exit 1
    if [ -s "$TMP/errors" ]; then
        sed 's/^/bench_docs.sh: no value: /' "$TMP/errors" >&2
        die "$out: some keys give no value: docs not changed"
    fi
    grep -q '^<!-- bench:output -->$' "$PERF" && grep -q '^<!-- /bench:output -->$' "$PERF" ||
        die "docs/performance.md: no <!-- bench:output --> ... <!-- /bench:output --> lines"
    mkdir "$TMP/orig"
    for f in $(docs); do cp "$f" "$TMP/orig/$(echo "${f#"$ROOT"/}" | tr / _)"; done
    awk -v new="$TMP/new" '
        /^<!-- bench:output -->$/ {
            print; print "```"
            while ((getline l < new) > 0) print l
            print "```"; skip = 1; next
        }
        /^<!-- \/bench:output -->$/ { skip = 0 }
        !skip' "$PERF" >"$TMP/perf"
    cmp -s "$TMP/perf" "$PERF" || cat "$TMP/perf" >"$PERF"
    for f in $(docs); do
        awk -v vals="$TMP/values" '
            BEGIN { while ((getline l < vals) > 0) { i = index(l, "\t"); v[substr(l, 1, i - 1)] = substr(l, i + 1) } }
            {
                s = $0; o = ""
                while (match(s, /<!-- bench:[A-Za-z0-9_.-]+ -->[^<]*<!-- \/bench -->/)) {
                    m = substr(s, RSTART, RLENGTH)
                    k = substr(m, 12); k = substr(k, 1, index(k, " ") - 1)
                    if (k in v) m = "<!-- bench:" k " -->" v[k] "<!-- /bench -->"
                    o = o substr(s, 1, RSTART - 1) m
                    s = substr(s, RSTART + RLENGTH)
                }
                print o s
            }' "$f" >"$TMP/doc"
        cmp -s "$TMP/doc" "$f" || cat "$TMP/doc" >"$f"
        rel=${f#"$ROOT"/}
        cmp -s "$f" "$TMP/orig/$(echo "$rel" | tr / _)" || echo "bench_docs.sh: updated $rel"
    done
    check
}

cmd=${1:-}
case $cmd in
update)
    [ $# = 2 ] || die "usage: bench_docs.sh update BENCH_OUTPUT"
    update "$2"
    ;;
check)
    [ $# = 1 ] || die "usage: bench_docs.sh check"
    check
    ;;
value | keys)
    if [ "$cmd" = value ]; then
        [ $# = 2 ] || [ $# = 3 ] || die "usage: bench_docs.sh value KEY [BENCH_OUTPUT]"
        src=${3:-}
    else
        [ $# = 1 ] || [ $# = 2 ] || die "usage: bench_docs.sh keys [BENCH_OUTPUT]"
        src=${2:-}
    fi
    if [ -z "$src" ]; then block "$PERF" >"$TMP/block"; src=$TMP/block; fi
    [ -s "$src" ] || die "$src: no such file, or empty"
    : >"$TMP/errors"
    values "$src" || exit 1
    if [ "$cmd" = keys ]; then
        sed 's/^/bench_docs.sh: no value: /' "$TMP/errors" >&2
        cat "$TMP/values"
    else
        v=$(awk -F'\t' -v k="$2" '$1 == k { print $2; f = 1 } END { exit !f }' "$TMP/values") ||
            die "$2 is not a key of bench/figures.txt"
        [ -n "$v" ] || die "no value: $(grep -F "$2: " "$TMP/errors" | head -n 1)"
        echo "$v"
    fi
    ;;
*)
    die "usage: bench_docs.sh update BENCH_OUTPUT | check | value KEY [BENCH_OUTPUT] | keys [BENCH_OUTPUT]"
    ;;
esac
