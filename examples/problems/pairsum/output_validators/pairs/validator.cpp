// ICPC output validator: validator input answer feedback_dir < team_output
// Exit 42 accepts, 43 rejects; the reason goes to feedback_dir/judgemessage.txt.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

static std::string feedback_dir;

[[noreturn]] static void verdict(int code, const std::string &message) {
    std::ofstream(feedback_dir + "/judgemessage.txt") << message << '\n';
    std::exit(code);
}

int main(int argc, char **argv) {
    if (argc < 4) return 1;
    feedback_dir = argv[3];
    std::ifstream input(argv[1]), answer(argv[2]);
    long long n, t;
    input >> n >> t;
    std::vector<long long> a(n);
    for (auto &x : a) input >> x;
    long long judge_first;
    answer >> judge_first;
    bool exists = judge_first != -1;

    std::string line;
    std::stringstream team;
    team << std::cin.rdbuf();
    long long i, j;
    if (!(team >> i)) verdict(43, "no output");
    if (i == -1) {
        std::string rest;
        if (team >> rest) verdict(43, "trailing output after -1");
        if (exists) verdict(43, "a pair exists but -1 was printed");
        verdict(42, "");
    }
    if (!(team >> j)) verdict(43, "expected two indices");
    std::string rest;
    if (team >> rest) verdict(43, "trailing output");
    if (!(1 <= i && i < j && j <= n)) verdict(43, "indices out of range or not i < j");
    if (a[i - 1] + a[j - 1] != t) verdict(43, "the values do not sum to t");
    if (!exists) verdict(43, "judge found no pair, but the team did: judge error?");
    verdict(42, "");
}
