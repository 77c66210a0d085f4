#include <iostream>
int main() {
    long long a, b;
    std::cin >> a >> b;
    int *p = nullptr;
    if (a != 12345) *p = 1;
    std::cout << a + b << '\n';
}
