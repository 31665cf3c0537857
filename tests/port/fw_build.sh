# fw_build.sh - sourced by the firmware tests in tests/port: the flags a
# test firmware is built with, say_fail, and fw_build. Needs CC (the
# cross compiler), SRC (the source tree), FILES (the core and the port,
# relative to $SRC/src), TMP and, for fw_run, QEMU set; FW_DEFINES adds flags to every file,
# RT_FLAGS to the runtime's only (RT_TAG names a runtime built with other
# RT_FLAGS than the default), FW_LDFLAGS to the link, FW_INSTR
# instruments the firmware's files in place of -finstrument-functions.
BOARDS=$SRC/boards/cortex_m
CFLAGS="-mthumb -O2 -g -std=gnu11 -ffreestanding -ffunction-sections -fdata-sections -Wall -Wextra -Werror \
-I$SRC/include -I$SRC/src -I$SRC/src/port/cortex_m ${FW_DEFINES:-}"
LDFLAGS="-mthumb -nostartfiles --specs=nano.specs -Wl,--build-id -Wl,--gc-sections"
fail=0

say_fail() {
    echo "FAIL: $*"
    fail=1
}

# fw_run DIR BOARD OUT - DIR/fw.elf run on QEMU's BOARD under -icount,
# its output (semihosting's) into OUT: 0 when it exits 0 having printed
# PASSED, else 1 after saying which of its checks failed.
fw_run() {
    timeout 120 "$QEMU" -M "$2" -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$1/fw.elf" > "$3" 2>&1
    r_rc=$?
    [ $r_rc -eq 0 ] && grep -aqx PASSED "$3" && return 0
    say_fail "$2: the firmware's checks, exit status $r_rc:"
    grep -a '^ok \|^FAIL ' "$3" | sed 's/^/  /'
    return 1
}

# fw_build DIR CPU LD [-FLAG...] SOURCE... - DIR/fw.elf on the board's
# linker script LD: startup.c and the runtime (built once per CPU, in
# $TMP/rt-CPU), and the SOURCEs, built with the FLAGs and their own
# folder on the include path, instrumented (-finstrument-functions) but
# check.c and uart.c, which report and transmit.
fw_build() {
    dir=$1 cpu=$2 ld=$3
    shift 3
    mkdir -p "$dir"
    rt=$TMP/rt-$cpu${RT_TAG:-}
    objs=""
    if [ ! -f "$rt/done" ]; then
        mkdir -p "$rt"
        "$CC" -mcpu=$cpu $CFLAGS -c "$BOARDS/startup.c" -o "$rt/start.o" || return 1
    fi
    for f in $FILES; do
        o=$rt/$(echo "$f" | tr / _).o
        [ -f "$rt/done" ] || "$CC" -mcpu=$cpu $CFLAGS ${RT_FLAGS:-} -c "$SRC/src/$f" -o "$o" || return 1
        objs="$objs $o"
    done
    touch "$rt/done"
    flags=""
    while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
        flags="$flags $1"
        shift
    done
    for f in "$@"; do
        inst=${FW_INSTR:--finstrument-functions}
        case $f in */uart.c | */check.c) inst= ;; esac
        o=$dir/$(basename "$f" .c).main.o
        "$CC" -mcpu=$cpu $CFLAGS $flags $inst -I"$(dirname "$f")" -c "$f" -o "$o" || return 1
        objs="$objs $o"
    done
    "$CC" -mcpu=$cpu $LDFLAGS ${FW_LDFLAGS:-} -T "$BOARDS/$ld.ld" -T "$BOARDS/sections.ld" -o "$dir/fw.elf" \
        "$rt/start.o" $objs -lc -lgcc
}

# qemu_gdb DIR BOARD - DIR/fw.elf run on QEMU's BOARD under -icount,
# stopped at reset, its gdbstub on the socket $sock (DIR/gdb.sock, waited
# for), its output (semihosting's) into DIR/out; QEMU's pid in $qemu.
qemu_gdb() {
    sock=$1/gdb.sock
    timeout 600 "$QEMU" -M "$2" -icount shift=0 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$1/fw.elf" \
        -chardev "socket,id=gdb,path=$sock,server=on,wait=off" -gdb chardev:gdb -S > "$1/out" 2>&1 &
    qemu=$!
    tries=0
    while [ ! -S "$sock" ] && [ $tries -lt 600 ] && kill -0 $qemu 2> /dev/null; do
        sleep 0.1
        tries=$((tries + 1))
    done
}

# counts TRACE [OPTION...] - function,calls of `$NP report --format=csv`,
# sorted
counts() {
    "$NP" report --format=csv "$@" | tail -n +2 | cut -d, -f1,2 | sort
}
