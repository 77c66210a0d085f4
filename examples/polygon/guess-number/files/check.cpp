// Checker in testlib's convention: check <input> <output> <answer>; the output is the
// interactor's (the number found). The answer, when there is one, must agree.
#include <cstdio>

int main(int argc, char **argv) {
    if (argc < 4) return 3;
    FILE *input = std::fopen(argv[1], "r"), *output = std::fopen(argv[2], "r");
    FILE *answer = std::fopen(argv[3], "r");
    long long n, secret, found, expected;
    if (!input || std::fscanf(input, "%lld %lld", &n, &secret) != 2) return 3;
    if (!output || std::fscanf(output, "%lld", &found) != 1) {
        std::fprintf(stderr, "wrong answer: nothing found\n");
        return 1;
    }
    if (answer && std::fscanf(answer, "%lld", &expected) == 1 && expected != secret) return 3;
    if (found != secret) {
        std::fprintf(stderr, "wrong answer: found %lld, not %lld\n", found, secret);
        return 1;
    }
    return 0;
}
