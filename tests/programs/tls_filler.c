/* tls_filler.c - a shared library with FILL bytes of initial-exec TLS, as
 * any library built that way has: test_dlopen loads such libraries until
 * the C library's spare static TLS is used up. */
static __thread char fill[FILL] __attribute__((tls_model("initial-exec")));

char *tls_filler(void)
{
    return fill;
}
