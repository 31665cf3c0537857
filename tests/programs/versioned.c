/* versioned.c - a shared library whose one function is known by a
 * versioned name only (versioned_fn@@V1, with the version script
 * versioned.map) beside a local alias, as glibc's functions are in its
 * debug file's .symtab: tests/test_analyze.c checks that the symbols
 * module names it "versioned_fn". */
__attribute__((noinline)) int impl_v1(int x) { return x + 1; }
__asm__(".symver impl_v1, versioned_fn@@V1");
