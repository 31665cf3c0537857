#!/bin/sh
# test_bitflip.sh NANOPROF BITFLIP PROG [SMALL [N]] - one flipped bit of a
# trace is said, never a changed profile at exit status 0
# (docs/trace-format.md, "Damage"). PROG (rec_prog, linked with the
# runtime: it records in every build, sanitizers' too) records through
# NANOPROF_RECORD:
#   - a small trace (mode SMALL, threads by default: two threads, a few
#     KB): every bit of it flipped in turn, each read into a model
#     (test_bitflip all);
#   - a large one (fib 26: hundreds of KB, several chunks): N random bits
#     (1000 by default: each read takes milliseconds; NP_BITFLIP_RANDOM
#     overrides), the seed printed (NP_BITFLIP_SEED=S replays it);
#   - the commands themselves, `report --strict` and `dump
#     --format=folded --strict`, on a bit of each byte of the file header
#     and on 24 random bits of the small trace: the output and status 0 of
#     the undamaged trace, or another status and the damage said in a line
#     naming the file.
set -u
np=$1
bitflip=$2
prog=$3
mode=${4:-threads}
count=${NP_BITFLIP_RANDOM:-${5:-1000}}
. "$(dirname "$0")/cli_test.sh"

NANOPROF_RECORD=$tmp/small "$prog" $mode >/dev/null 2>&1 || { bad "record $mode"; finish; }
NANOPROF_RECORD=$tmp/large "$prog" fib 26 >/dev/null 2>&1 || { bad "record fib 26"; finish; }
small=$(ls "$tmp"/small/*.npt)
large=$(ls "$tmp"/large/*.npt)
bytes() { wc -c <"$1" | tr -d ' '; }
echo "small trace: $(bytes "$small") bytes; large: $(bytes "$large") bytes"
[ "$(bytes "$large")" -gt 100000 ] && ok "the large trace holds hundreds of KB" || bad "large trace too small"

if "$bitflip" all "$small" >"$tmp/all" 2>&1; then ok "every bit of the small trace: $(tail -n 1 "$tmp/all")"; else
    bad "every bit of the small trace:"; cat "$tmp/all"; fi
seed=${NP_BITFLIP_SEED:-$(date +%s)}
echo "seed $seed (NP_BITFLIP_SEED=$seed replays it)"
if "$bitflip" random "$count" "$seed" "$large" >"$tmp/random" 2>&1; then
    ok "random bits of the large trace: $(tail -n 1 "$tmp/random")"
else
    bad "random bits of the large trace (seed $seed):"; cat "$tmp/random"
fi

# ---- the commands themselves ----
for v in report dump; do
    set -- --strict
    [ $v = dump ] && set -- --format=folded --strict
    "$np" $v "$@" "$tmp/small" >"$tmp/good.$v" 2>"$tmp/err" && [ ! -s "$tmp/err" ] ||
        { bad "$v: the undamaged trace"; cat "$tmp/err"; finish; }
done
bits=""
i=0
while [ $i -lt 16 ]; do bits="$bits $((8 * i + (3 * i) % 8))"; i=$((i + 1)); done
bits="$bits $(awk -v s="$seed" -v n="$(bytes "$small")" 'BEGIN { srand(s); for (i = 0; i < 24; i++) printf "%d ", int(rand() * 8 * n) }')"
said=0 same=0
for bit in $bits; do
    "$bitflip" flip "$bit" "$small" || { bad "flip $bit"; break; }
    for v in report dump; do
        set -- --strict
        [ $v = dump ] && set -- --format=folded --strict
        "$np" $v "$@" "$tmp/small" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc = 0 ] && cmp -s "$tmp/out" "$tmp/good.$v" && [ ! -s "$tmp/err" ]; then
            same=$((same + 1))
        elif [ $rc != 0 ] && grep -q "^nanoprof $v: .*$small" "$tmp/err" &&
            [ "$(grep -vc "^nanoprof $v: " "$tmp/err")" = 0 ]; then
            said=$((said + 1))
        else
            bad "bit $bit: $v --strict: exit $rc, stderr:"; cat "$tmp/err"
        fi
    done
    "$bitflip" flip "$bit" "$small"
done
[ $fail = 0 ] && ok "the commands on $(echo $bits | wc -w) flipped bits: $said runs said the damage, $same the same output"
finish
