// cxx_throw.cc - a C++ program whose exceptions leave instrumented frames,
// for test_cxx_throw.sh, built with g++ and with clang++. Parser::parse
// calls level1, level2 and level3, and check, called by level3, throws
// for a negative number: the exception leaves check, level3, level2 and
// level1 and Parser::parse catches it. Then an exception is rethrown,
// one is caught in a destructor while another unwinds (outer, unwound),
// and a recursive function catches what a deeper call of it throws
// (descend). At the end main calls scale,
// which calls twice: the depths there tell whether the frames the
// exceptions left are still counted as open. Built with NP_DUMPS it
// measures function cost and keeps a call trace (the runtime's API), and
// prints the calls open in the last twice and, at the end, both.
#include <cstdio>
#include <stdexcept>
#ifdef NP_DUMPS
#include <nanoprof/nanoprof.h>
static uint64_t stats[8192], cost[8192], trace[4096];
#endif

class Parser {
public:
    // V, less four, or -1 when V is negative
    int parse(int v) const;
};

__attribute__((noinline)) int check(int v)
{
    if (v < 0)
        throw std::invalid_argument("negative");
    return v;
}
__attribute__((noinline)) int level3(int v) { return check(v - 1) + 1; }
__attribute__((noinline)) int level2(int v) { return level3(v - 1) + 1; }
__attribute__((noinline)) int level1(int v) { return level2(v - 1) + 1; }

int Parser::parse(int v) const
{
    try {
        return level1(v) - 7;
    } catch (const std::invalid_argument &) {
        return -1;
    }
}

// Rethrown: middle catches what inner let through and rethrows it
// (`throw;`), outer catches it.
__attribute__((noinline)) int inner(int v) { return check(v) + 1; }
__attribute__((noinline)) int middle(int v)
{
    try {
        return inner(v) + 1;
    } catch (...) {
        throw;
    }
}
__attribute__((noinline)) int outer(int v)
{
    try {
        return middle(v);
    } catch (const std::invalid_argument &) {
        return -2;
    }
}

// Caught while another unwinds: the exception inner lets through leaves
// guarded, whose Guard's destructor throws and catches one of its own;
// guarded's caller catches the first.
struct Guard {
    ~Guard()
    {
        try {
            check(-1);
        } catch (const std::invalid_argument &) {
        }
    }
};
__attribute__((noinline)) int guarded(int v)
{
    Guard g;
    return inner(v);
}
__attribute__((noinline)) int unwound(int v)
{
    try {
        return guarded(v);
    } catch (const std::invalid_argument &) {
        return -3;
    }
}

// Recursive: descend(2) catches what descend(0) throws, through
// descend(1); descend(3) goes on.
__attribute__((noinline)) int descend(int n)
{
    if (n == 0)
        return check(-1);
    if (n != 2)
        return descend(n - 1) + 1;
    try {
        return descend(n - 1) + 1;
    } catch (const std::invalid_argument &) {
        return -4;
    }
}

__attribute__((noinline)) int twice(int v)
{
#ifdef NP_DUMPS
    if (v == 3)
        np_calltrace_dump(); // the calls open now: twice, in scale
#endif
    return v + v;
}
__attribute__((noinline)) int scale(int v) { return twice(v) + 1; }

int main()
{
#ifdef NP_DUMPS
    np_stats_init(stats, sizeof stats);
    np_cost_init(cost, sizeof cost);
    np_calltrace_init(trace, sizeof trace, NP_CALLTRACE_STACK);
#endif
    const Parser parser;
    int sum = 0, errors = 0;
    for (int i = 0; i < 6; i++) {
        int v = parser.parse(i % 2 ? 10 + i : -i);
        if (v < 0)
            errors++;
        else
            sum += v;
    }
    errors += (outer(-1) == -2) + (outer(-2) == -2) + (unwound(-1) == -3) + (descend(3) == -3);
    for (int i = 0; i < 4; i++)
        sum += scale(i);
    std::printf("errors %d sum %d\n", errors, sum);
#ifdef NP_DUMPS
    np_calltrace_dump();
    np_stats_calc(stats);
    np_stats_dump(stats);
#endif
    return 0;
}
