// Generator: gen <seed> <bound> prints two numbers in [-bound, bound] (a fixed LCG, so the
// same command always writes the same test).
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
    if (argc < 3) return 1;
    unsigned long long state = std::strtoull(argv[1], nullptr, 10) * 6364136223846793005ULL + 1;
    long long bound = std::atoll(argv[2]);
    long long values[2];
    for (long long &value : values) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        value = (long long)(state >> 11) % (2 * bound + 1) - bound;
    }
    std::printf("%lld %lld\n", values[0], values[1]);
}
