// pg_throw.cc - C++ exceptions through frames built with -pg or -pg
// -mfentry (tests/test_pg_cli.sh): each round, catcher calls thrower(5),
// whose innermost call throws; each thrower frame's Guard calls dtor_leaf
// as the exception leaves it; the handler calls caught_leaf. Then a
// rethrow round (thrower(3), caught, `throw;`, caught further out), then
// after x2, which return normally through frames the catch took back.
#include <cstdio>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

static volatile int sink;

NOINLINE void dtor_leaf() { sink++; }
NOINLINE void caught_leaf() { sink++; }
NOINLINE void after() { sink += 2; }

struct Guard {
    ~Guard() { dtor_leaf(); }
};

NOINLINE void thrower(int n)
{
    Guard g;
    if (n > 1)
        thrower(n - 1);
    else
        throw std::runtime_error("bottom");
    sink++;
}

NOINLINE void catcher(int n)
{
    try {
        thrower(n);
    } catch (const std::exception &) {
        caught_leaf();
    }
}

NOINLINE void rethrower()
{
    try {
        thrower(3);
    } catch (...) {
        caught_leaf();
        throw;
    }
}

NOINLINE void outer()
{
    try {
        rethrower();
    } catch (...) {
        caught_leaf();
    }
}

int main()
{
    catcher(5);
    catcher(5);
    outer();
    after();
    after();
    std::printf("done %d\n", sink);
    return 0;
}
