#include <iostream>
#include <numeric>
#include <vector>
int main() {
    std::vector<long long> v(2);
    for (auto &x : v) std::cin >> x;
    std::cout << std::reduce(v.begin(), v.end()) << '\n';
}
