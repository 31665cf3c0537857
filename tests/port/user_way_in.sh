#!/bin/sh
# user_way_in.sh CMAKE ARM_CC QEMU SRC_DIR NANOPROF BOARD:CPU... - a user's way in for a
# Cortex-M board (docs/porting.md, "Building for a board"): configure the
# source with cmake/arm-none-eabi.cmake and NP_BOARD in an empty build
# directory, build, install into an empty prefix, then build app.c with
# the installed library, headers, startup.c and link.ld alone, run it
# under qemu-system-arm and check its exit status (main's return value)
# and its call trace exactly, sent as records and printed by `nanoprof
# import` with names from the ELF (call sites masked); no text of the
# runtime in the firmware's output. Then app_timed.c, built the same way, which reads the time
# (function cost, a section): exact counts, times that make sense, and
# SysTick's handler linked for the clock, where app.c with
# -lnanoprof-calltrace links neither, and app.c with -lnanoprof links no
# other mechanism's object. Then app_libc.c, ordinary firmware
# built the same way but with -lnanoprof-text, whose dumps are text made
# on the target (functions by address, named from nm here): newlib's printf (line-buffered, in order with the
# runtime's dump, flushed at exit), malloc and free on the heap of
# link.ld up to __HeapLimit, main(argc, argv); its output compared
# exactly; again with the two additions docs/porting.md names: floats
# in printf (-u _printf_float) and the command line from semihosting
# (startup.c built with -DNP_BOARD_CMDLINE=N). On the mps2 boards, the
# UART example (examples/cortex_m/uart) by its own Makefile.
set -u
CMAKE=$1
ARM_CC=$2
QEMU=$3
SRC=$4
NANOPROF=$5
shift 5
NM=$(dirname "$ARM_CC")/arm-none-eabi-nm
TMP=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
# nothing of the host's build may leak into the target's
unset CC CFLAGS LDFLAGS CMAKE_GENERATOR CMAKE_BUILD_TYPE CMAKE_TOOLCHAIN_FILE CMAKE_PREFIX_PATH
cat > "$TMP/expected" <<'END'
calltrace: log mode, thread 0, lr=SITE, 8 records, 0 lost
    leaf: lr=SITE
    leaf: lr=SITE
  mid: lr=SITE
    leaf: lr=SITE
    leaf: lr=SITE
    leaf: lr=SITE
  mid: lr=SITE
top: lr=SITE
END
# app_libc.c's output, the call trace's functions by name, call sites
# masked; ARGS and FLOAT differ between the two builds
libc_expected() {
    printf '%s' "$1"
    cat <<'END'
-42 42 beef str c     7|8  |
END
    printf 'float [%s]\n' "$2"
    cat <<'END'
the call trace:
calltrace: log mode, thread 0, lr=SITE, 8 records, 0 lost
    leaf: lr=SITE
    leaf: lr=SITE
  mid: lr=SITE
    leaf: lr=SITE
    leaf: lr=SITE
    leaf: lr=SITE
  mid: lr=SITE
top: lr=SITE
after it
heap: full at __HeapLimit
END
    printf 'no newline at the end: exit flushes it'
}
libc_expected 'argc 0
' '' > "$TMP/expected_libc"
libc_expected 'argc 3
argv[0] "fw.elf"
argv[1] "one"
argv[2] "2"
' '2.625' > "$TMP/expected_libc_args"
# app NAME LIB [FLAGS...]: tests/port/NAME.c built as a user builds it,
# against the install (P, B, cpu: the board's; known_calls.h beside it)
# and FLAGS, into $dir/NAME.elf
app() {
    a_name=$1 a_lib=$2
    shift 2
    "$ARM_CC" -mcpu="$cpu" -mthumb -O2 -finstrument-functions -I "$P/include" -I "$SRC/tests/port" "$@" \
        "$SRC/tests/port/$a_name.c" "$B/startup.c" -T "$B/link.ld" -L "$P/lib" -l"$a_lib" \
        -nostartfiles --specs=nano.specs --specs=nosys.specs -o "$dir/$a_name.elf"
}
# run ELF OUT [SEMIHOSTING_ARGS]: ELF on the board under QEMU, its output
# in OUT; the exit status
run() {
    timeout 120 "$QEMU" -M "$board" -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native${3:-} -icount shift=0 -kernel "$1" > "$2" 2>&1
}
# named ELF OUT GOT: OUT with leaf, mid and top named (from nm: a Thumb
# function's address is the symbol's value with bit 0 set) and call sites
# masked, into GOT
named() {
    : > "$dir/names.sed"
    for fn in leaf mid top; do
        addr=$("$NM" "$1" | awk -v f=$fn '$3 == f { print $1 }')
        printf 's/^\\( *\\)0x%x:/\\1%s:/\n' $((0x$addr | 1)) $fn >> "$dir/names.sed"
    done
    sed -f "$dir/names.sed" -e 's/lr=0x[0-9a-f]*/lr=SITE/g' "$2" > "$3"
}
fail=0
for arg in "$@"; do
    board=${arg%%:*}
    cpu=${arg#*:}
    dir=$TMP/$board
    P=$dir/prefix
    B=$P/share/nanoprof/boards/$board
    if ! sh "$SRC/scripts/board_install.sh" "$CMAKE" "$SRC" "$board" "$dir" -DNP_WERROR=ON; then
        fail=1
        continue
    fi
    if ! app app nanoprof; then
        echo "FAIL: $board: the app does not build against the install"
        fail=1
        continue
    fi
    run "$dir/app.elf" "$dir/out"
    rc=$?
    # -lnanoprof sends its dump as records: the host names and prints them
    "$NANOPROF" import "$dir/out" --elf "$dir/app.elf" -o "$dir/trace" > "$dir/imported" 2> "$dir/import.err"
    irc=$?
    sed 's/lr=0x[0-9a-f]*/lr=SITE/g' "$dir/imported" > "$dir/got"
    # linked by the user's line (no --gc-sections): no formatter, no
    # floating point, no message text in the image the board loads
    formats=$("$NM" "$dir/app.elf" | grep -c -e ' np_report_text$' -e ' __aeabi_d[a-z]*$' -e ' printf$')
    "$(dirname "$ARM_CC")/arm-none-eabi-objcopy" -O binary "$dir/app.elf" "$dir/app.elf.bin"
    if [ $rc -ne 8 ] || [ $irc -ne 0 ] || ! cmp -s "$TMP/expected" "$dir/got" || grep -aq 'calltrace' "$dir/out" ||
        [ "$formats" != 0 ] || grep -aq 'not initialised' "$dir/app.elf.bin"; then
        echo "FAIL: $board ($cpu): exit status $rc (want 8), import's $irc, text or $formats formatting symbols in the firmware, or:"
        sed 's/^/  /' "$dir/import.err"
        diff "$TMP/expected" "$dir/got" | sed 's/^/  /'
        fail=1
    else
        echo "ok: $board ($cpu): installed, app built and traced, its records imported"
    fi
    # by the user's line, the call trace brings no other mechanism's
    # object: the hooks name none (function cost and the trace are reached
    # through what their init functions set), and each object comes with
    # the calls of its own functions alone
    others=$("$NM" "$dir/app.elf" | awk '$3 ~ /^(np_cost_init|np_stats_init|np_trace_init|np_trace_init_ring|np_tt_start|np_thread_switch|np_sections_init_buf|np_bins_init_buf|np_blocks_init_buf|np_gprof_init|np_port_tick_start)$/ { printf "%s ", $3 }')
    if [ -n "$others" ]; then
        echo "FAIL: $board ($cpu): app.c (the call trace alone) by the user's line links other mechanisms: $others"
        fail=1
    else
        echo "ok: $board ($cpu): the call trace by the user's line links no other mechanism"
    fi
    # the call trace reads no time: with its own library, neither the
    # clock nor SysTick's handler comes into the app (the board's weak one
    # stays)
    if ! app app nanoprof-calltrace -Wl,--gc-sections ||
        "$NM" "$dir/app.elf" | grep -q -e ' np_cm_systick_read$' -e ' T SysTick_Handler$'; then
        echo "FAIL: $board: app.c with -lnanoprof-calltrace does not build, or links the clock"
        fail=1
    fi
    # a program that reads the time, built the same way: function cost and
    # a section, exact counts and times that make sense (app_timed.c)
    if ! app app_timed nanoprof; then
        echo "FAIL: $board: app_timed does not build against the install"
        fail=1
        continue
    fi
    run "$dir/app_timed.elf" "$dir/out_timed"
    rc=$?
    if [ $rc -ne 0 ] || ! "$NM" "$dir/app_timed.elf" | grep -q ' T SysTick_Handler$'; then
        echo "FAIL: $board ($cpu): app_timed: exit status $rc (want 0: the check that failed), output:"
        sed 's/^/  /' "$dir/out_timed"
        fail=1
    else
        echo "ok: $board ($cpu): app_timed built, timed and counted"
    fi
    # ordinary firmware: the C library beside the runtime (app_libc.c),
    # by the user's line alone, then with floats and the command line
    if ! app app_libc nanoprof-text; then
        echo "FAIL: $board: app_libc (printf, malloc, main's arguments) does not build against the install"
        fail=1
        continue
    fi
    run "$dir/app_libc.elf" "$dir/out_libc"
    rc=$?
    named "$dir/app_libc.elf" "$dir/out_libc" "$dir/got_libc"
    if [ $rc -ne 0 ] || ! cmp -s "$TMP/expected_libc" "$dir/got_libc"; then
        echo "FAIL: $board ($cpu): app_libc: exit status $rc (want 0: the check that failed), output:"
        sed 's/^/  /' "$dir/out_libc"
        diff "$TMP/expected_libc" "$dir/got_libc" | sed 's/^/  /'
        fail=1
    else
        echo "ok: $board ($cpu): app_libc: printf, malloc up to __HeapLimit, main(argc, argv)"
    fi
    if ! app app_libc nanoprof-text -u _printf_float -DNP_BOARD_CMDLINE=64; then
        echo "FAIL: $board: app_libc with floats and the command line does not build"
        fail=1
        continue
    fi
    run "$dir/app_libc.elf" "$dir/out_libc_args" ",arg=fw.elf,arg=one,arg=2"
    rc=$?
    named "$dir/app_libc.elf" "$dir/out_libc_args" "$dir/got_libc_args"
    if [ $rc -ne 0 ] || ! cmp -s "$TMP/expected_libc_args" "$dir/got_libc_args"; then
        echo "FAIL: $board ($cpu): app_libc with floats and arguments: exit status $rc, output:"
        sed 's/^/  /' "$dir/out_libc_args"
        diff "$TMP/expected_libc_args" "$dir/got_libc_args" | sed 's/^/  /'
        fail=1
    else
        echo "ok: $board ($cpu): app_libc: %f with -u _printf_float, argv from semihosting"
    fi
    # the UART example by its own Makefile, as its README says: built
    # against the install, run in QEMU (its capture from the serial port),
    # imported and reported by the nanoprof on PATH
    case $board in
    mps2-an385 | mps2-an386)
        cp -r "$SRC/examples/cortex_m/uart" "$dir/uart"
        PATH="$(dirname "$NANOPROF"):$PATH" make -s -C "$dir/uart" NANOPROF="$P" BOARD="$board" CC="$ARM_CC" \
            QEMU="timeout 120 $QEMU" import > "$dir/uart.out" 2>&1
        rc=$?
        got=$(awk '$NF == "read_sensor" || $NF == "filter" || $NF == "check_limits" { print $NF "=" $(NF-7) }' \
            "$dir/uart.out" | sort | tr '\n' ' ')
        if [ $rc -ne 0 ] || [ "$got" != "check_limits=8 filter=64 read_sensor=64 " ]; then
            echo "FAIL: $board ($cpu): the UART example's Makefile: make's status $rc, counts '$got', output:"
            sed 's/^/  /' "$dir/uart.out"
            fail=1
        else
            echo "ok: $board ($cpu): the UART example built, run and imported by its Makefile, counts exact"
        fi
        ;;
    esac
    # a command line longer than startup.c's buffer: one line, status 98
    run "$dir/app_libc.elf" "$dir/out_long" ",arg=fw.elf,arg=$(printf '%070d' 0)"
    rc=$?
    if [ $rc -ne 98 ] || [ "$(cat "$dir/out_long")" != "startup.c: the command line is longer than NP_BOARD_CMDLINE - 1 bytes" ]; then
        echo "FAIL: $board ($cpu): a command line too long: exit status $rc (want 98), output:"
        sed 's/^/  /' "$dir/out_long"
        fail=1
    else
        echo "ok: $board ($cpu): a command line too long for startup.c: said, exit 98"
    fi
done
exit $fail
