#include <iostream>
#include <vector>
int main() {
    std::vector<std::vector<char>> hoard;
    for (int i = 0; i < 4096; i++) hoard.emplace_back(1 << 20, 'x');
    std::cout << hoard.size() << '\n';
}
