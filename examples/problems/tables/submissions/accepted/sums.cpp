#include <fstream>
#include <iostream>

int main() {
    long long k, x, sum = 0;
    std::cin >> k;
    std::ifstream table("table.txt");
    for (long long i = 0; i < k && table >> x; ++i) sum += x;
    std::cout << sum << "\n";
}
