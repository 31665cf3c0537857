#!/bin/sh
# test_plt_names.sh ELF_FUNCS - a PLT stub is NAME@plt, as objdump names
# it (common/elf_symtab.h): for programs built here with each PLT layout
# (x86-64's lazy .plt, -z now, .plt.sec with -fcf-protection and IBT, a
# library's .plt.got; AArch64's .plt, and with BTI) and for the system's
# libc and libstdc++, every stub objdump names after a symbol has that
# name at its address, and no other function is named @plt. ARM's 32-bit
# stubs are not named: none of them may be.
set -u
funcs=$1
. "$(dirname "$0")/cli_test.sh"
need cc aarch64-linux-gnu-gcc aarch64-linux-gnu-objdump arm-linux-gnueabihf-gcc objdump readelf
export LC_ALL=C

cat >"$tmp/p.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern void lib_fn(void);
int main(int argc, char **argv)
{
    char *s = malloc(32);
    strcpy(s, argc > 1 ? argv[1] : "x");
    printf("%zu\n", strlen(s));
    free(s);
    lib_fn();
    return 0;
}
C
cat >"$tmp/lib.c" <<'C'
#include <stdio.h>
void lib_fn(void) { puts("lib"); }
void (*lib_ptr)(void) = lib_fn; /* a GOT entry of its own: .plt.got */
void lib_call(void) { lib_ptr(); puts("again"); }
C

# stubs TAG OBJDUMP FILE [LEAST]: objdump's NAME@plt stubs (not *ABS*+...@plt,
# IRELATIVE slots no symbol names) against ours
stubs() {
    "$2" -d "$3" | sed -n 's/^0*\([0-9a-f][0-9a-f]*\) <\([^*][^>]*@plt\)>:$/\1 \2/p' | sort >"$tmp/want"
    "$funcs" "$3" | grep '@plt$' | sort >"$tmp/got"
    n=$(wc -l <"$tmp/want")
    if [ "$n" -lt "${4:-1}" ]; then
        bad "$1: objdump names only $n stubs"
    elif cmp -s "$tmp/want" "$tmp/got"; then
        ok "$1: $n stubs named as objdump names them"
    else
        bad "$1: stubs named otherwise than objdump's:"; diff "$tmp/want" "$tmp/got" | head -10
    fi
}

build() { # build TAG CC FLAGS...: the library, and the program linked with it
    tag=$1 c=$2
    shift 2
    # (-z force-bti warns of the C library's start files, which have no BTI note)
    $c -shared -fPIC "$@" "$tmp/lib.c" -o "$tmp/lib$tag.so" 2>"$tmp/err" &&
        $c "$@" "$tmp/p.c" "$tmp/lib$tag.so" -o "$tmp/p$tag" 2>>"$tmp/err" || { bad "$tag: build"; cat "$tmp/err"; return 1; }
}

if build lazy cc -O2; then stubs "x86-64, lazy .plt" objdump "$tmp/plazy" 5; stubs "x86-64 library, .plt.got" objdump "$tmp/liblazy.so" 1; fi
if build now cc -O2 -Wl,-z,now; then stubs "x86-64, -z now" objdump "$tmp/pnow" 5; fi
if build ibt cc -O2 -fcf-protection=full -Wl,-z,ibtplt; then
    readelf -SW "$tmp/pibt" | grep -q ' \.plt\.sec ' && stubs "x86-64, .plt.sec (IBT)" objdump "$tmp/pibt" 5 ||
        bad "x86-64, IBT: no .plt.sec built"
fi
if build a64 aarch64-linux-gnu-gcc -O2; then stubs "AArch64 .plt" aarch64-linux-gnu-objdump "$tmp/pa64" 5; fi
if build bti aarch64-linux-gnu-gcc -O2 -mbranch-protection=standard -Wl,-z,force-bti; then
    stubs "AArch64 .plt with BTI" aarch64-linux-gnu-objdump "$tmp/pbti" 5
fi
for lib in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
    stubs "$(basename "$lib")" objdump "$lib" 1
done
# 32-bit ARM: no names made up
if build arm arm-linux-gnueabihf-gcc -O2; then
    if "$funcs" "$tmp/parm" | grep -q '@plt$'; then bad "ARM: a stub named"; else ok "ARM: stubs left unnamed"; fi
fi

finish
