// Validator in testlib's convention (exit 0: valid): two integers of at most 10^12 in
// absolute value, one space, one newline, nothing else.
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main() {
    char line[128];
    if (!std::fgets(line, sizeof line, stdin)) return 1;
    long long a, b;
    char end;
    if (std::sscanf(line, "%lld %lld%c", &a, &b, &end) != 3 || end != '\n') return 1;
    if (std::llabs(a) > 1000000000000LL || std::llabs(b) > 1000000000000LL) return 1;
    return std::fgetc(stdin) == EOF ? 0 : 1;
}
