/* twin_main.c - calls twin_a 3 times and twin_b twice, so that the static
 * twin of twin_a.c is called 3 times, twin_b.c's twice. */
int twin_a(int x);
int twin_b(int x);

int main(void)
{
    int x = 0;
    for (int i = 0; i < 3; i++)
        x = twin_a(x);
    for (int i = 0; i < 2; i++)
        x = twin_b(x);
    return x == 12 ? 0 : 1;
}
