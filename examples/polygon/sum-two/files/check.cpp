// Checker in testlib's convention: check <input> <output> <answer>; exit 0 accepts, 1 is a
// wrong answer. Compares one integer.
#include <cstdio>

int main(int argc, char **argv) {
    if (argc < 4) return 3;
    FILE *output = std::fopen(argv[2], "r"), *answer = std::fopen(argv[3], "r");
    long long got, expected;
    if (!answer || std::fscanf(answer, "%lld", &expected) != 1) return 3;
    if (!output || std::fscanf(output, "%lld", &got) != 1) {
        std::fprintf(stderr, "wrong answer: no number\n");
        return 1;
    }
    if (got != expected) {
        std::fprintf(stderr, "wrong answer: expected %lld, got %lld\n", expected, got);
        return 1;
    }
    std::fprintf(stderr, "ok %lld\n", got);
    return 0;
}
