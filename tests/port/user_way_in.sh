#!/bin/sh
# user_way_in.sh CMAKE ARM_CC QEMU SRC_DIR BOARD:CPU... - a user's way in for a
# Cortex-M board (docs/porting.md, "Building for a board"): configure the
# source with cmake/arm-none-eabi.cmake and NP_BOARD in an empty build
# directory, build, install into an empty prefix, then build app.c with
# the installed library, headers, startup.c and link.ld alone, run it
# under qemu-system-arm and check its exit status (main's return value)
# and its call trace exactly: functions by name (from nm), call sites
# masked. Then app_timed.c, built the same way, which reads the time
# (function cost, a section): exact counts, times that make sense, and
# SysTick's handler linked for the clock, where app.c with
# -lnanoprof-calltrace links neither.
set -u
CMAKE=$1
ARM_CC=$2
QEMU=$3
SRC=$4
shift 4
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
# run ELF OUT: ELF on the board under QEMU, its output in OUT; the exit status
run() {
    timeout 120 "$QEMU" -M "$board" -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -icount shift=0 -kernel "$1" > "$2" 2>&1
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
    # function addresses (Thumb: the symbol's value with bit 0 set) to names
    : > "$dir/names.sed"
    for fn in leaf mid top; do
        addr=$("$NM" "$dir/app.elf" | awk -v f=$fn '$3 == f { print $1 }')
        printf 's/^\\( *\\)0x%x:/\\1%s:/\n' $((0x$addr | 1)) $fn >> "$dir/names.sed"
    done
    sed -f "$dir/names.sed" -e 's/lr=0x[0-9a-f]*/lr=SITE/g' "$dir/out" > "$dir/got"
    if [ $rc -ne 8 ] || ! cmp -s "$TMP/expected" "$dir/got"; then
        echo "FAIL: $board ($cpu): exit status $rc (want 8), output:"
        sed 's/^/  /' "$dir/out"
        diff "$TMP/expected" "$dir/got" | sed 's/^/  /'
        fail=1
    else
        echo "ok: $board ($cpu): installed, app built and traced"
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
done
exit $fail
