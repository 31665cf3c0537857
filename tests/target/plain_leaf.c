/* plain_leaf.c - for ctargs.c: a function built with
 * -finstrument-functions alone (run.sh), whose hook sees no arguments. */
__attribute__((noinline)) int plain_leaf(int a, int b, int c, int d) { return a * b + c * d; }
