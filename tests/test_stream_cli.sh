#!/bin/sh
# test_stream_cli.sh NANOPROF GEN_CALLS PEAK_RSS [memory] - the views that
# walk every call (replay, dump --format=chrome) print as they read, on
# traces tests/gen_calls.c writes:
#   - replay's exact output where threads interleave chunk by chunk (a
#     "# thread" line at each change, a call with callees in two lines, a
#     leaf in one), with --min-duration and --depth; the Chrome export of
#     such a trace balanced and nested per thread, its calls report's;
#   - `replay | head -1` and `dump | head -c` stop reading once the pipe
#     is closed: the trace ends with a second file, a directory, which a
#     whole read reports on stderr; with SIGPIPE ignored they exit 0
#     without a word;
#   - with "memory" (not in sanitizer builds, whose allocator keeps freed
#     memory): on 4 million calls, replay and the Chrome export stay under
#     64 MiB of peak RSS (keeping every call, at 52 bytes each, took 208 MB).
set -u
np=$(readlink -f "$1")
gen=$(readlink -f "$2")
peak=$(readlink -f "$3")
mode=${4:-}
np_cmd=replay
. "$(dirname "$0")/cli_test.sh"
need jq

if [ "$mode" = memory ]; then
    # peak RSS in KiB of NAME: CMD..., its output to /dev/null
    check_rss() {
        name=$1
        shift
        "$peak" "$@" >/dev/null 2>"$tmp/rss.err"
        rc=$?
        kib=$(sed -n 's/^peak_rss: \([0-9]*\) KiB.*/\1/p' "$tmp/rss.err")
        if [ "$rc" != 0 ] || [ -z "$kib" ]; then
            bad "$name: exit $rc"; cat "$tmp/rss.err"
        elif [ "$kib" -le 65536 ]; then
            ok "$name: peak RSS $kib KiB (at most 64 MiB)"
        else
            bad "$name: peak RSS $kib KiB, over 64 MiB"
        fi
    }
    calls=$("$gen" "$tmp/big" 4000000 4) || { echo "FAIL generating 4M calls"; exit 1; }
    [ "$calls" = 4000000 ] && ok "4M calls generated" || bad "generated $calls calls"
    check_rss "replay, 4M calls" "$np" replay "$tmp/big"
    check_rss "chrome, 4M calls" "$np" dump --format=chrome -o /dev/null "$tmp/big"
    "$np" replay "$tmp/big" --depth=1 | tail -n 1 >"$tmp/last"
    same "replay, 4M calls: every thread's outermost call" "$tmp/last" "# 4 calls in 4 threads"
    finish
fi

# ---- exact output: 2 threads, a unit of 7 calls per chunk ----
calls=$("$gen" "$tmp/small" 30 2 1) || { echo "FAIL generating the small trace"; exit 1; }
s=$tmp/small
[ "$calls" = 30 ] && ok "small trace: 30 calls" || bad "small trace: $calls calls"
run "$s"
status "replay: exit 0, quiet" 0
same "replay: as read, a line per thread change" "$tmp/out" "# $s: every call, wall time
         Start     Duration  Function
# thread 100 \"t0\" (pid 1)
   0.000000000               main {
   0.000000001                 outer {
   0.000000002                   mid {
   0.000000003         2 ns        leaf
   0.000000006         5 ns        leaf
                      10 ns      } /* mid */
   0.000000013         1 ns      leaf
   0.000000015                   mid {
   0.000000016         3 ns        leaf
                       5 ns      } /* mid */
                      21 ns    } /* outer */
# thread 101 \"t1\" (pid 1)
   0.000000001               main {
   0.000000002                 outer {
   0.000000003                   mid {
   0.000000004         2 ns        leaf
   0.000000007         5 ns        leaf
                      10 ns      } /* mid */
   0.000000014         1 ns      leaf
   0.000000016                   mid {
   0.000000017         3 ns        leaf
                       5 ns      } /* mid */
                      21 ns    } /* outer */
# thread 100 \"t0\" (pid 1)
   0.000000024                 outer {
   0.000000025                   mid {
   0.000000026         2 ns        leaf
   0.000000029         5 ns        leaf
                      10 ns      } /* mid */
   0.000000036         1 ns      leaf
   0.000000038                   mid {
   0.000000039         3 ns        leaf
                       5 ns      } /* mid */
                      21 ns    } /* outer */
# thread 101 \"t1\" (pid 1)
   0.000000025                 outer {
   0.000000026                   mid {
   0.000000027         2 ns        leaf
   0.000000030         5 ns        leaf
                      10 ns      } /* mid */
   0.000000037         1 ns      leaf
   0.000000039                   mid {
   0.000000040         3 ns        leaf
                       5 ns      } /* mid */
                      21 ns    } /* outer */
# thread 100 \"t0\" (pid 1)
                      47 ns  } /* main */
# thread 101 \"t1\" (pid 1)
                      47 ns  } /* main */
# 30 calls in 2 threads"
# the leaves of 1, 2 and 3 ns left out: the second mid has no callee left
run "$s" --min-duration=5 --tid=100
same "replay --min-duration: shorter calls out, a call without callees one line" "$tmp/out" "# $s: every call, wall time
         Start     Duration  Function
# thread 100 \"t0\" (pid 1)
   0.000000000               main {
   0.000000001                 outer {
   0.000000002                   mid {
   0.000000006         5 ns        leaf
                      10 ns      } /* mid */
   0.000000015         5 ns      mid
                      21 ns    } /* outer */
   0.000000024                 outer {
   0.000000025                   mid {
   0.000000029         5 ns        leaf
                      10 ns      } /* mid */
   0.000000038         5 ns      mid
                      21 ns    } /* outer */
                      47 ns  } /* main */
# 9 calls in 1 thread"
run "$s" --depth=2 --tid=101
same "replay --depth: the calls below it left out" "$tmp/out" "# $s: every call, wall time
         Start     Duration  Function
# thread 101 \"t1\" (pid 1)
   0.000000001               main {
   0.000000002        21 ns    outer
   0.000000025        21 ns    outer
                      47 ns  } /* main */
# 3 calls in 1 thread"

# ---- Chrome: 3 threads interleaved chunk by chunk ----
calls=$("$gen" "$tmp/mid" 20000 3 40) || bad "generating the Chrome trace"
"$np" dump --format=chrome "$tmp/mid" >"$tmp/chrome" 2>"$tmp/err" && [ ! -s "$tmp/err" ] ||
    { bad "chrome: exit 0, quiet"; cat "$tmp/err"; }
# per thread, in the order written: B and E balance, nest, never go back
jq -r '[.traceEvents[] | select(.ph == "B" or .ph == "E")] | group_by(.tid)
    | map(reduce .[] as $e ({open: [], last: -1, bad: null, n: 0};
        if .bad then . elif $e.ts < .last then .bad = "ts goes back"
        elif $e.ph == "B" then .open += [$e.name] | .last = $e.ts | .n += 1
        elif (.open | length) == 0 or .open[-1] != $e.name then .bad = "E of \($e.name) closes another"
        else .open |= .[:-1] | .last = $e.ts end)
        | if .bad then .bad elif (.open | length) > 0 then "B without E" else .n end)
    | if all(type == "number") then "nesting ok, \(add) calls" else map(select(type == "string"))[0] end' \
    "$tmp/chrome" >"$tmp/nest"
same "chrome: balanced and nested per thread, every call" "$tmp/nest" "nesting ok, $calls calls"
jq -r '[.traceEvents[] | select(.ph == "M") | .name] | join(",")' "$tmp/chrome" >"$tmp/names"
same "chrome: the names, last" "$tmp/names" "process_name,thread_name,thread_name,thread_name"
jq -r '[.traceEvents[] | select(.ph == "B")] | group_by(.name) | map("\(.[0].name) \(length)") | .[]' \
    "$tmp/chrome" >"$tmp/got"
"$np" report --format=csv "$tmp/mid" | tail -n +2 | cut -d, -f1-2 | tr , ' ' | LC_ALL=C sort >"$tmp/want"
LC_ALL=C sort "$tmp/got" >"$tmp/got.sorted"
cmp -s "$tmp/want" "$tmp/got.sorted" && ok "chrome: B events per function are report's calls" ||
    { bad "chrome: B events per function"; diff "$tmp/want" "$tmp/got.sorted"; }

# ---- a closed pipe stops the reading ----
# 2M calls, then a second "file" that a whole read reports
"$gen" "$tmp/long" 2000000 2 >/dev/null || bad "generating 2M calls"
mkdir "$tmp/long/2.npt"
"$np" report "$tmp/long" >/dev/null 2>"$tmp/err"
grep -q '2.npt.*not a regular file' "$tmp/err" && ok "a whole read reaches 2.npt and says so" ||
    { bad "a whole read reaches 2.npt"; cat "$tmp/err"; }
"$np" replay "$tmp/long" 2>"$tmp/err" | head -n 1 >"$tmp/first"
same "replay | head -1: the first line" "$tmp/first" "# $tmp/long: every call, wall time"
[ ! -s "$tmp/err" ] && ok "replay | head -1: stopped before 2.npt" || { bad "replay | head -1 read on"; cat "$tmp/err"; }
"$np" dump --format=chrome "$tmp/long" 2>"$tmp/err" | head -c 20 >"$tmp/first"
printf '\n' >>"$tmp/first"
same "dump | head -c: the first bytes" "$tmp/first" '{"displayTimeUnit":"'
[ ! -s "$tmp/err" ] && ok "dump | head -c: stopped before 2.npt" || { bad "dump | head -c read on"; cat "$tmp/err"; }
# where SIGPIPE is ignored, the failed write stops it: exit 0, quiet
(trap '' PIPE; "$np" replay "$tmp/long" 2>"$tmp/err"; echo $? >"$tmp/rc") | head -n 1 >/dev/null
[ "$(cat "$tmp/rc")" = 0 ] && [ ! -s "$tmp/err" ] && ok "replay, SIGPIPE ignored: exit 0, quiet" ||
    { bad "replay, SIGPIPE ignored: exit $(cat "$tmp/rc")"; cat "$tmp/err"; }
(trap '' PIPE; "$np" dump --format=chrome "$tmp/long" 2>"$tmp/err"; echo $? >"$tmp/rc") | head -c 1 >/dev/null
[ "$(cat "$tmp/rc")" = 0 ] && [ ! -s "$tmp/err" ] && ok "dump, SIGPIPE ignored: exit 0, quiet" ||
    { bad "dump, SIGPIPE ignored: exit $(cat "$tmp/rc")"; cat "$tmp/err"; }
# a write that fails otherwise is an error
if [ -w /dev/full ]; then
    "$np" replay "$tmp/long" >/dev/full 2>"$tmp/err"
    rc=$?
    status "replay to a full disk: exit 1, one line" 1 "writing the timeline failed: No space left on device"
    np_cmd=dump
    run --format=chrome -o /dev/full "$tmp/long"
    status "chrome to a full disk: exit 1, one line" 1 "writing the output failed: No space left on device"
fi

finish
