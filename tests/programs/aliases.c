/* aliases.c - a shared library whose one function has two names at one
 * address, a global one and a weak alias listed after it, as C libraries
 * have them: tests/test_port_posix.c checks that the runtime's and the
 * host's symbolizers both name it "aliased_fn" (the global one). */
int aliased_weak(int x) __attribute__((weak, alias("aliased_fn")));
__attribute__((noinline)) int aliased_fn(int x)
{
    return x * 3;
}
