/* patch_plugin.c - a library built with patchable entries, loaded and
 * unloaded by patch_prog's dlclose mode (tests/test_patch_cli.sh). */
__attribute__((noinline)) long plug_work(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 7;
}
