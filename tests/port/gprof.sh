#!/bin/sh
# gprof.sh CMAKE ARM_CC QEMU SRC_DIR NANOPROF BOARD:CPU:CLOCK_HZ... - the GNU profiler
# on the target (nanoprof/gprof.h, docs/porting.md): for each board, the
# runtime configured with cmake/arm-none-eabi.cmake, built and installed
# into an empty prefix; then, from the install alone, firmwares built with
# -pg and run under qemu-system-arm with -icount:
#  - gprof_fw.c: main calls a() CALLS_A times, a calls b() CALLS_B times,
#    main calls busy() once (a() saves r8-r11: on ARMv6-M through lr,
#    before the hook). arm-none-eabi-gprof -b reads the gmon.out
#    QEMU wrote in its working directory with nothing on stderr; the flat
#    profile and the call graph hold exactly those calls; the firmware
#    said nothing (no sample outside the text, no call lost).
#    Samples: -icount shift=SHIFT makes an instruction 2^SHIFT ns of the
#    virtual clock SysTick runs on, so busy's 2 * BUSY_LOOPS instructions
#    are EXPECT samples at HZ. The rest of the program (40 calls through
#    mcount, the setup: under 50,000 instructions, 1.6 ms) is under one
#    sample period (10 ms): busy holds EXPECT samples, give or take the
#    one a period's boundary may move, and at most one sample is
#    elsewhere. At HZ 100 a sample is 0.01 s, gprof's printed precision,
#    so its seconds give the sample counts exactly.
#  - gprof_bad.c: misuse (NULL or small buffers, bad rate or text, a
#    second init, a write before init, a full arc table): each status
#    exactly, and each error line, sent as a record, exactly as `nanoprof
#    import` prints it; no fault (exit status 0); the file written with
#    the table full holds the one call that fitted.
set -u
CMAKE=$1
ARM_CC=$2
QEMU=$3
SRC=$4
NANOPROF=$5
shift 5
BIN=$(dirname "$ARM_CC")
GPROF=$BIN/arm-none-eabi-gprof
NM=$BIN/arm-none-eabi-nm
HZ=100
CALLS_A=10
CALLS_B=3
BUSY_LOOPS=10000000
SHIFT=5
EXPECT=$((2 * BUSY_LOOPS * (1 << SHIFT) * HZ / 1000000000))
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
unset CC CFLAGS LDFLAGS CMAKE_GENERATOR CMAKE_BUILD_TYPE CMAKE_TOOLCHAIN_FILE CMAKE_PREFIX_PATH

# The call graph's entries for a, b, busy and main: "called name" of each
# line of their blocks, times and indexes left out, sorted.
cat > "$TMP/graph.expected" <<END
1 busy
1/1 busy
1/1 main
10 a
10/10 a
10/10 main
$((CALLS_A * CALLS_B)) b
$((CALLS_A * CALLS_B))/$((CALLS_A * CALLS_B)) a
$((CALLS_A * CALLS_B))/$((CALLS_A * CALLS_B)) b
<spontaneous>
main
END
sort -o "$TMP/graph.expected" "$TMP/graph.expected"

fail=0
for arg in "$@"; do
    board=${arg%%:*}
    rest=${arg#*:}
    cpu=${rest%%:*}
    clock=${rest#*:}
    dir=$TMP/$board
    P=$dir/prefix
    B=$P/share/nanoprof/boards/$board
    if ! sh "$SRC/scripts/board_install.sh" "$CMAKE" "$SRC" "$board" "$dir" -DNP_WERROR=ON; then
        fail=1
        continue
    fi
    # -pg when compiling only: at the link it would ask for a profiling C
    # library (-lc_p) that the toolchain does not have
    CF="-mcpu=$cpu -mthumb -O2 -g -pg -fno-optimize-sibling-calls -Wall -Wextra -Werror -I$P/include"
    for fw in gprof_fw gprof_bad; do
        mkdir -p "$dir/$fw"
        if ! { "$ARM_CC" $CF -DBOARD_HZ="$clock" -DHZ=$HZ -DCALLS_A=$CALLS_A -DCALLS_B=$CALLS_B \
                   -DBUSY_LOOPS=$BUSY_LOOPS -c "$SRC/tests/port/$fw.c" -o "$dir/$fw/fw.o" &&
               "$ARM_CC" $CF -c "$B/startup.c" -o "$dir/$fw/startup.o" &&
               "$ARM_CC" -mcpu="$cpu" -mthumb "$dir/$fw/fw.o" "$dir/$fw/startup.o" -T "$B/link.ld" \
                   -L "$P/lib" -lnanoprof -nostartfiles --specs=nano.specs --specs=nosys.specs \
                   -o "$dir/$fw/fw.elf"; }; then
            echo "FAIL: $board: $fw does not build against the install"
            fail=1
            continue 2
        fi
        # QEMU's working directory is where semihosting writes gmon.out
        (cd "$dir/$fw" && timeout 120 "$QEMU" -M "$board" -nographic -monitor none -serial none \
             -semihosting-config enable=on,target=native -icount shift=$SHIFT -kernel fw.elf > out 2>&1)
        echo $? > "$dir/$fw/rc"
    done

    # ---- the profile -----------------------------------------------------
    d=$dir/gprof_fw
    bad=""
    [ "$(cat "$d/rc")" = 0 ] || bad="$bad exit status $(cat "$d/rc");"
    [ -s "$d/out" ] && bad="$bad the firmware said something;"
    if [ ! -s "$d/gmon.out" ]; then
        bad="$bad no gmon.out;"
    else
        "$GPROF" -b "$d/fw.elf" "$d/gmon.out" > "$d/gprof.out" 2> "$d/gprof.err"
        [ $? = 0 ] || bad="$bad gprof failed;"
        [ -s "$d/gprof.err" ] && bad="$bad gprof said something on stderr;"
        # flat profile: calls, and samples from seconds (0.01 s each)
        awk -v a=$CALLS_A -v b=$((CALLS_A * CALLS_B)) '
            /^Flat profile/ { f = 1 } /Call graph/ { f = 0 }
            f && NF == 7 && $NF == "a" { ca = $4 } f && NF == 7 && $NF == "b" { cb = $4 }
            f && NF == 7 && $NF == "busy" { cbusy = $4 }
            END { if (ca != a || cb != b || cbusy != 1) print "flat profile calls: a " ca ", b " cb ", busy " cbusy }
        ' "$d/gprof.out" > "$d/flat.bad"
        [ -s "$d/flat.bad" ] && bad="$bad $(cat "$d/flat.bad");"
        samples=$(awk '/^Flat profile/ { f = 1 } /Call graph/ { f = 0 }
            f && $1 ~ /^[0-9.]+$/ && NF >= 4 { s = int($3 * 100 + 0.5); all += s; if ($NF == "busy") busy = s }
            END { print busy + 0, all + 0 }' "$d/gprof.out")
        busy=${samples% *}
        all=${samples#* }
        if [ "$busy" -lt $((EXPECT - 1)) ] || [ "$busy" -gt $((EXPECT + 1)) ] || [ $((all - busy)) -gt 1 ]; then
            bad="$bad samples: busy $busy (want $EXPECT +-1), elsewhere $((all - busy)) (want at most 1);"
        fi
        # call graph: the blocks of a, b, busy and main
        awk '/^index % time/ { g = 1; next } /^Index by function name/ { g = 0 }
            !g { next }
            /^---/ { if (keep) printf "%s", blk; blk = ""; keep = 0; next }
            {
                line = $0
                if (line ~ /^\[/) { n = split(line, w, " "); name = w[n - 1]
                                    keep = name == "a" || name == "b" || name == "busy" || name == "main" }
                gsub(/\[[0-9]+\]/, "", line); gsub(/[0-9]+\.[0-9]+/, "", line)
                gsub(/^ +| +$/, "", line); gsub(/ +/, " ", line)
                if (line != "") blk = blk line "\n"
            }' "$d/gprof.out" | sort > "$d/graph.got"
        cmp -s "$TMP/graph.expected" "$d/graph.got" ||
            bad="$bad call graph: $(diff "$TMP/graph.expected" "$d/graph.got" | grep '^[<>]' | tr '\n' ' ');"
    fi
    if [ -n "$bad" ]; then
        echo "FAIL: $board ($cpu): gprof_fw:$bad"
        [ -f "$d/gprof.out" ] && sed 's/^/  /' "$d/gprof.out" "$d/gprof.err" "$d/out"
        fail=1
    else
        echo "ok: $board ($cpu): exact calls, busy $busy of $all samples (expected $EXPECT)"
    fi

    # ---- misuse --------------------------------------------------------------
    d=$dir/gprof_bad
    stext=$("$NM" "$d/fw.elf" | awk '$3 == "_stext" { print $1 }')
    etext=$("$NM" "$d/fw.elf" | awk '$3 == "_etext" { print $1 }')
    need=$(( ( ((0x$etext - 1) | 63) - (0x$stext & ~63) ) / 64 * 2 + 2 ))
    cat > "$d/expected" <<END
nanoprof: np_gprof_write: np_gprof_init first
write before init: -4
nanoprof: np_gprof_init: NULL or misaligned (arcs: 4 bytes, hist: 2)
init NULL: -1
nanoprof: np_gprof_init: NULL or misaligned (arcs: 4 bytes, hist: 2)
arcs NULL: -1
nanoprof: np_gprof_init: NULL or misaligned (arcs: 4 bytes, hist: 2)
hist NULL: -1
nanoprof: np_gprof_init: NULL or misaligned (arcs: 4 bytes, hist: 2)
hist misaligned: -1
nanoprof: np_gprof_init: arcs_size under NP_GPROF_ARCS_SIZE(1)
arcs too small: -2
nanoprof: np_gprof_init: hist_size under $need
hist too small: -2
nanoprof: np_gprof_init: hz: 1 to 100000
hz 0: -1
nanoprof: np_gprof_init: no text range (text_start, text_end)
text backwards: -1
init: 0
nanoprof: np_gprof_init: already running
init again: -3
nanoprof: np_gprof_write: 5 calls lost (arc table full)
write, table full: -5
nanoprof: np_gprof_write: 5 calls lost (arc table full)
END
    # the file np_gprof_write wrote with the table full: f1's one call, f2's
    # calls lost (none counted), read without a warning
    full=$("$GPROF" -b "$d/fw.elf" "$d/gmon_full.out" 2> "$d/gprof.err" |
           awk '/^Flat profile/ { f = 1 } /Call graph/ { f = 0 } f && NF == 7 && $1 ~ /^[0-9.]+$/ { printf "%s %s;", $NF, $4 }')
    # the runtime's lines are records the host prints; the firmware's own,
    # text between them (each record ends in zero bytes: a value's high ones)
    grep '^nanoprof' "$d/expected" > "$d/expected.reports"
    grep -v '^nanoprof' "$d/expected" > "$d/expected.text"
    "$NANOPROF" import "$d/out" --elf "$d/fw.elf" -o "$d/trace" > "$d/reports" 2> "$d/import.err"
    irc=$?
    grep -aoE '[a-zA-Z][a-zA-Z0-9 ,]*: -?[0-9]+$' "$d/out" > "$d/text"
    if [ "$(cat "$d/rc")" != 0 ] || [ $irc != 0 ] || ! cmp -s "$d/expected.reports" "$d/reports" ||
        ! cmp -s "$d/expected.text" "$d/text"; then
        echo "FAIL: $board ($cpu): gprof_bad: exit status $(cat "$d/rc") (want 0), import's $irc, output:"
        diff "$d/expected.reports" "$d/reports" | sed 's/^/  /'
        diff "$d/expected.text" "$d/text" | sed 's/^/  /'
        sed 's/^/  /' "$d/import.err"
        fail=1
    elif [ "$full" != "f1 1;" ] || [ -s "$d/gprof.err" ]; then
        echo "FAIL: $board ($cpu): gprof_bad: gmon_full.out: calls '$full' (want 'f1 1;'), stderr:"
        sed 's/^/  /' "$d/gprof.err"
        fail=1
    else
        echo "ok: $board ($cpu): misuse said and refused, no fault"
    fi
done
exit $fail
