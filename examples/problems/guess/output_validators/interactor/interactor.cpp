// ICPC interactive validator: interactor input answer feedback_dir
// stdin is the submission's output, stdout its input. Exit 42 accepts, 43 rejects.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

static std::string feedback_dir;

[[noreturn]] static void verdict(int code, const std::string &message) {
    std::ofstream(feedback_dir + "/judgemessage.txt") << message << '\n';
    std::exit(code);
}

int main(int argc, char **argv) {
    if (argc < 4) return 1;
    feedback_dir = argv[3];
    std::ifstream input(argv[1]);
    int secret;
    input >> secret;
    for (int query = 1; query <= 10; query++) {
        std::string mark;
        long long guess;
        if (!(std::cin >> mark >> guess) || mark != "?") verdict(43, "expected a query \"? y\"");
        if (guess == secret) {
            std::cout << "correct" << std::endl;
            verdict(42, "found in " + std::to_string(query) + " queries");
        }
        std::cout << (secret < guess ? "lower" : "higher") << std::endl;
    }
    verdict(43, "more than 10 queries");
}
