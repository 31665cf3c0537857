# cli_checks.sh - sourced by the shell tests of nanoprof's commands
# (test_analyze_cli.sh, test_flame_cli.sh) after setting np (the nanoprof
# executable) and cmd (the command tested): a temporary directory $tmp
# removed on exit, pass/fail counts, running the command and the checks.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# run ARGS...: nanoprof $cmd ARGS, stdout in $tmp/out, stderr in $tmp/err, status in $rc
run() {
    "$np" "$cmd" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
# same NAME FILE EXPECTED-TEXT: the file holds exactly that text
same() {
    printf '%s\n' "$3" >"$tmp/want"
    if diff -u "$tmp/want" "$2" >"$tmp/diff"; then ok "$1"; else bad "$1"; cat "$tmp/diff"; fi
}
# status NAME WANT [NEEDLE]: $rc is WANT; stderr ($tmp/err) is exactly one
# line, holding NEEDLE, or empty without NEEDLE
status() {
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" != "$2" ]; then
        bad "$1: exit $rc, want $2"; cat "$tmp/err"
    elif [ -n "${3:-}" ] && { [ "$lines" != 1 ] || ! grep -q -- "$3" "$tmp/err"; }; then
        bad "$1: want one line with '$3' on stderr, got:"; cat "$tmp/err"
    elif [ -z "${3:-}" ] && [ -s "$tmp/err" ]; then
        bad "$1: unexpected stderr:"; cat "$tmp/err"
    else
        ok "$1"
    fi
}
# finish: the counts; exit status 1 when a check failed
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}
