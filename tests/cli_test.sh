# cli_test.sh - sourced by the shell tests of nanoprof commands
# (test_analyze_cli.sh, test_dump_cli.sh...): a temporary directory $tmp,
# pass/fail counting, the tools they need and the checks they share. Set
# $np (the nanoprof command) and $np_cmd (the subcommand `run` runs)
# before sourcing it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
# same NAME FILE EXPECTED-TEXT: the file holds exactly that text
same() {
    printf '%s\n' "$3" >"$tmp/want"
    if diff -u "$tmp/want" "$2" >"$tmp/diff"; then ok "$1"; else bad "$1"; cat "$tmp/diff"; fi
}
# same_files NAME WANT GOT: the two files hold the same text
same_files() {
    if diff -u "$2" "$3" >"$tmp/diff"; then ok "$1"; else bad "$1"; cat "$tmp/diff"; fi
}
# run ARGS...: nanoprof $np_cmd ARGS, stdout in $tmp/out, stderr in $tmp/err, status in $rc
run() {
    "$np" "$np_cmd" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
# status NAME WANT [NEEDLE]: $rc is WANT; stderr is exactly one line, holding NEEDLE
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
# status_loss NAME WANT NEEDLE LOSS: $rc is WANT; stderr is two lines, one
# holding NEEDLE (the reader's), then the warning of what was lost holding LOSS
status_loss() {
    if [ "$rc" != "$2" ]; then
        bad "$1: exit $rc, want $2"; cat "$tmp/err"
    elif [ "$(wc -l <"$tmp/err")" != 2 ] || ! head -n 1 "$tmp/err" | grep -q -- "$3" ||
        ! tail -n 1 "$tmp/err" | grep -q -- "warning: $4"; then
        bad "$1: want '$3' then a warning '$4' on stderr, got:"; cat "$tmp/err"
    else
        ok "$1"
    fi
}
# need TOOL...: each tool on the PATH, or the test fails at once with one
# line naming it (scripts/deps.sh installs every tool a test uses: a test
# that cannot run its check fails, it never passes unchecked)
need() {
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || { echo "FAIL $t is not installed (scripts/deps.sh installs it)"; exit 1; }
    done
}
# finish: the counts, and the exit status
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}
