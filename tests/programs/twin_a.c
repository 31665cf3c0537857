/* twin_a.c - a static function called twin, as in twin_b.c: two
 * functions of one name in one program (twin_main.c calls each). */
static __attribute__((noinline)) int twin(int x)
{
    return x + 1;
}

int twin_a(int x)
{
    return twin(x);
}
