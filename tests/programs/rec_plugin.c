/* rec_plugin.c - an instrumented shared library that rec_prog dlopens
 * (mode dlopen): its calls must come after its MODULE chunk. */
void plugin_work(void);
void plugin_work(void)
{
    __asm__ __volatile__("" ::: "memory");
}
