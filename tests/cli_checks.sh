# cli_checks.sh - the checks the command-line tests share (sourced): each
# counts into $pass and $fail; files go to $tmp, which the test makes.
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
# same NAME FILE EXPECTED-TEXT: the file holds exactly that text
same() {
    printf '%s\n' "$3" >"$tmp/want"
    if diff -u "$tmp/want" "$2" >"$tmp/diff"; then ok "$1"; else bad "$1"; cat "$tmp/diff"; fi
}
# status NAME WANT [NEEDLE]: $rc is WANT; stderr ($tmp/err) is exactly one
# line, holding NEEDLE (without NEEDLE: empty)
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
