# uftrace_cmp.sh - sourced by the shell tests that record a program with
# `nanoprof record` and `uftrace record` on the same binary
# (test_pg_cli.sh, test_patch_cli.sh) and compare the two, and by
# tests/port/linux_a64.sh for its counts and nesting. Source it after
# cli_test.sh.

# counts TRACE: "name calls" of every function, sorted
counts() { "$np" report --format=csv "$1" | awk -F, 'NR > 1 { print $1, $2 }' | sort; }
# uf_counts DIR: the same from uftrace (its kernel pseudo-functions left out)
uf_counts() { uftrace report -d "$1" -f call --no-pager | awk 'NR > 2 && NF == 2 && $2 !~ /^linux:/ { print $2, $1 }' | sort; }
# nesting TRACE: "depth name" of every call, in order
nesting() {
    "$np" replay "$1" | awk '/Function$/ { col = index($0, "Function"); next }
        /^#/ || !col { next }
        { s = substr($0, col); n = match(s, /[^ ]/) - 1; s = substr(s, n + 1)
          if (s ~ /^\[depth /) { split(s, w, " "); print w[2] - 1, w[3] }
          else if (s !~ /^}/) { split(s, w, " "); print n / 2, w[1] } }'
}
uf_nesting() {
    uftrace replay -d "$1" -f none --no-pager | awk '{ n = match($0, /[^ ]/) - 1; s = substr($0, n + 1)
        if (s !~ /^}/) { sub(/\(.*/, "", s); print n / 2, s } }'
}
# expect NAME TRACE "name calls" ...: the trace's counts are exactly these
expect() {
    e_name=$1
    e_trace=$2
    shift 2
    printf '%s\n' "$@" | sort >"$tmp/want"
    counts "$e_trace" >"$tmp/got"
    same_files "$e_name" "$tmp/want" "$tmp/got"
}
# rec NAME BIN ARGS...: nanoprof record and uftrace record of BIN ARGS, in
# $tmp/NAME.np and $tmp/NAME.uf ($np_opts and $uf_opts: options of each);
# 0 when nanoprof's ran and exited 0
rec() {
    r_name=$1
    shift
    "$np" record ${np_opts:-} -o "$tmp/$r_name.np" -- "$@" >"$tmp/$r_name.out" 2>"$tmp/$r_name.err"
    r_rc=$?
    uftrace record --no-libcall --no-sched ${uf_opts:-} -d "$tmp/$r_name.uf" "$@" >/dev/null 2>&1
    if [ $r_rc != 0 ] || [ "$(grep -cv 'exited with status 0' "$tmp/$r_name.err")" != 0 ]; then
        bad "$r_name: record exited $r_rc:"; cat "$tmp/$r_name.err"
        return 1
    fi
}
# like_uftrace NAME [nesting]: counts (and the nesting) equal uftrace's
like_uftrace() {
    counts "$tmp/$1.np" >"$tmp/a"
    uf_counts "$tmp/$1.uf" >"$tmp/b"
    if [ ! -s "$tmp/b" ]; then
        bad "$1: uftrace recorded nothing"
    else
        same_files "$1: counts as uftrace's" "$tmp/b" "$tmp/a"
    fi
    if [ "${2:-}" = nesting ]; then
        nesting "$tmp/$1.np" >"$tmp/a"
        uf_nesting "$tmp/$1.uf" >"$tmp/b"
        same_files "$1: nesting as uftrace's" "$tmp/b" "$tmp/a"
    fi
}
# throw_counts NAME TRACE: tests/programs/pg_throw.cc's exact counts
throw_counts() {
    counts "$2" | grep -v Guard >"$tmp/a"
    same "$1" "$tmp/a" "after 2
catcher 2
caught_leaf 4
dtor_leaf 13
main 1
outer 1
rethrower 1
thrower 13"
}
# lines TRACE: replay's function column, indented
lines() {
    "$np" replay "$1" | awk '/Function$/ { col = index($0, "Function"); next } /^#/ || !col { next }
        { print substr($0, col) }'
}
# args_values NAME FILE: FILE holds replay's lines (lines) of
# tests/programs/pg_prog.c's args mode, recorded with its arguments and
# return values: in any order, exactly these
args_values() {
    sort "$2" >"$tmp/sorted"
    same "$1" "$tmp/sorted" '  add(-1, 5) = 4
  add(2, 40) = 42
  greet("world", 3, '"'x'"') = "world"
  greet(NULL, 0, '"'y'"') = NULL
  pass(0x1234) = 0x1234
main {
} /* main */'
}
