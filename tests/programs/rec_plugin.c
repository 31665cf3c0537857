/* rec_plugin.c - an instrumented shared library that rec_prog dlopens
 * (mode dlopen): its calls must come after its MODULE chunk. Its static
 * f1 has the name of rec_prog's f1: the views tell the two apart by
 * their modules. */
#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

static int plugin_sink;

KEEP static void f1(void)
{
    __atomic_add_fetch(&plugin_sink, 1, __ATOMIC_RELAXED);
}

void plugin_work(void);
void plugin_work(void)
{
    f1();
}
