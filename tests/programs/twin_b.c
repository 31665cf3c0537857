/* twin_b.c - the other static function called twin (twin_a.c). */
static __attribute__((noinline)) int twin(int x)
{
    return x * 2;
}

int twin_b(int x)
{
    return twin(x);
}
