// cxx_prog.cc - a C++ program for the tests of C++ names
// (test_cxx_names.sh), built with g++ and with clang++: a class and its
// method, function templates, std::sort with a comparator, std::map, an
// overloaded pair and an exception thrown and caught. The counts the
// tests check are fixed by the input below; std::sort's comparisons are
// counted by the program itself and printed.
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

static long compares; // calls of by_value, made by std::sort

// The number WORD holds; throws std::invalid_argument when it holds no
// digit. Not instrumented: Clang's -finstrument-functions calls no exit
// hook for a frame an exception leaves (GCC's does), so the exception
// leaves no instrumented frame but this one's caller catches it.
__attribute__((no_instrument_function)) static int digits(const std::string &word)
{
    int v = 0;
    bool digit = false;
    for (char c : word)
        if (c >= '0' && c <= '9') {
            v = v * 10 + (c - '0');
            digit = true;
        }
    if (!digit)
        throw std::invalid_argument(word);
    return v;
}

class Parser {
public:
    // The number WORD holds, or -1 when it holds none.
    int parse(const std::string &word) const;
};

int Parser::parse(const std::string &word) const
{
    try {
        return digits(word);
    } catch (const std::invalid_argument &) {
        return -1;
    }
}

int scale(int v) { return v * 2; }
double scale(double v) { return v * 1.5; }

template <typename T> T twice(T v) { return v + v; }

static bool by_value(int a, int b)
{
    compares++;
    return a < b;
}

int main()
{
    static const char *const words[] = { "12", "7", "x", "30", "5", "y", "9", "41", "3" };
    const Parser parser;
    std::vector<int> values;
    int errors = 0;
    for (const char *w : words) {
        int v = parser.parse(w);
        if (v < 0)
            errors++;
        else
            values.push_back(v);
    }
    std::sort(values.begin(), values.end(), by_value);
    std::map<int, int> by_rest;
    for (int v : values)
        by_rest[v % 3]++;
    long sum = 0;
    for (const auto &kv : by_rest)
        sum += scale(kv.second) + twice(kv.first);
    double d = scale(2.0) + twice(0.25);
    std::printf("errors %d compares %ld sum %ld d %g\n", errors, compares, sum, d);
    return 0;
}
