#!/bin/sh
# port_freestanding.sh CC SRC_DIR FILE... - the runtime's core and a
# target port (FILE..., relative to SRC_DIR/src) compiled as a target
# builds them: freestanding, no C library headers (only the compiler's
# own: stdint.h, stddef.h, ...), -Wall -Wextra -Werror, for ARMv6-M
# (Cortex-M0), ARMv7-M (M3) and ARMv7E-M (M4). Then every symbol the
# objects need must be one of theirs, a helper of the compiler's runtime
# (__aeabi_*) or one of the four functions GCC may call in a freestanding
# program (memcpy, memmove, memset, memcmp): a hosted call (malloc, getenv,
# pthread_*, a POSIX-only runtime file's function) fails the test. And
# every C file of src/runtime/ must be one of FILE...
set -u
CC=$1
SRC=$2
shift 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
INC=$("$CC" -print-file-name=include)
FLAGS="-std=gnu11 -O2 -ffreestanding -nostdlib -nostdinc -isystem $INC -Wall -Wextra -Werror \
-I$SRC/include -I$SRC/src/port/cortex_m"
fail=0

# The check itself: a C library header must not be found.
printf '#include <stdlib.h>\n' > "$TMP/probe.c"
if "$CC" -mcpu=cortex-m3 -mthumb $FLAGS -c "$TMP/probe.c" -o "$TMP/probe.o" 2>/dev/null; then
    echo "FAIL: <stdlib.h> compiles with these flags: hosted code would not be caught"
    exit 1
fi

# The tree keeps the rule: every C file of src/runtime/ is core, in the
# list (the hosted ones live in src/port/posix/).
for f in "$SRC"/src/runtime/*.c; do
    case " $* " in
    *" runtime/${f##*/} "*) ;;
    *) echo "FAIL: src/runtime/${f##*/} is not in the freestanding core's list: a hosted file belongs in src/port/posix/"
       fail=1 ;;
    esac
done

# each CPU with the default build choices, and with those that add code
# to the port and the core (-pg's exits and the call trace's r0-r3)
for variant in cortex-m0 cortex-m3 cortex-m4 cortex-m0:pg cortex-m4:pg; do
    cpu=${variant%:*}
    extra=
    [ "$variant" = "$cpu" ] || extra="-DNP_PG_EXITS=8 -DNP_CALLTRACE_ARGS=1"
    dir="$TMP/$variant"
    mkdir -p "$dir"
    for f in "$@"; do
        o="$dir/$(echo "$f" | tr / _).o"
        if ! "$CC" -mcpu=$cpu -mthumb $FLAGS $extra -c "$SRC/src/$f" -o "$o" 2> "$dir/err"; then
            echo "FAIL: $f does not compile for $cpu:"
            head -20 "$dir/err"
            fail=1
        fi
    done
    [ $fail = 0 ] || continue
    # strong undefined references ('U'; weak ones may stay undefined)
    arm-none-eabi-nm -u "$dir"/*.o | awk '$1 == "U" { print $2 }' | sort -u > "$dir/needed"
    arm-none-eabi-nm --defined-only "$dir"/*.o | awk 'NF == 3 { print $3 }' | sort -u > "$dir/defined"
    comm -23 "$dir/needed" "$dir/defined" | grep -Ev '^(__aeabi_[a-z0-9_]+|memcpy|memmove|memset|memcmp)$' \
        > "$dir/foreign"
    if [ -s "$dir/foreign" ]; then
        echo "FAIL: $variant: the core needs what no freestanding target has:"
        sed 's/^/  /' "$dir/foreign"
        fail=1
    else
        echo "ok: $variant: $# files, $(wc -l < "$dir/defined") symbols, needs only: $(comm -23 "$dir/needed" "$dir/defined" | tr '\n' ' ')"
    fi
done
exit $fail
