/* pg_lib.c - a library built as tests/programs/pg_prog.c is (-pg, or -pg
 * -mfentry), which its libthreads mode loads: the library's first calls
 * come from four threads at once, while the runtime rewrites its calls of
 * __fentry__ into jumps to thunks. */
#define NOINLINE __attribute__((noinline))

volatile long lib_sink;

NOINLINE void lib_leaf(long i) { lib_sink += i; }

NOINLINE long lib_work(long i)
{
    lib_leaf(i);
    lib_leaf(i + 1);
    return i;
}
