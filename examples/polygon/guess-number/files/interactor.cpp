// Interactor in testlib's convention: interactor <input> <tout> [<answer>], talking to the
// solution on stdin/stdout; exit 0 accepts, 1 is a wrong answer. The input holds n and the
// secret; the solution asks "? y" and hears "<", ">" or "=", at most 31 times.
#include <cstdio>

int main(int argc, char **argv) {
    if (argc < 3) return 3;
    FILE *input = std::fopen(argv[1], "r"), *tout = std::fopen(argv[2], "w");
    long long n, secret;
    if (!input || !tout || std::fscanf(input, "%lld %lld", &n, &secret) != 2) return 3;
    std::printf("%lld\n", n);
    std::fflush(stdout);
    for (int asked = 1; asked <= 31; ++asked) {
        long long guess;
        if (std::scanf(" ? %lld", &guess) != 1) {
            std::fprintf(stderr, "wrong answer: expected a query\n");
            return 1;
        }
        if (guess == secret) {
            std::printf("=\n");
            std::fflush(stdout);
            std::fprintf(tout, "%lld\n", guess);
            std::fprintf(stderr, "ok found %lld in %d queries\n", guess, asked);
            return 0;
        }
        std::printf(guess < secret ? "<\n" : ">\n");
        std::fflush(stdout);
    }
    std::fprintf(stderr, "wrong answer: more than 31 queries\n");
    return 1;
}
