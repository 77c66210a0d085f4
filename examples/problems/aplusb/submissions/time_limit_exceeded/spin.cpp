#include <iostream>
int main() {
    long long a, b;
    std::cin >> a >> b;
    volatile long long sum = 0;
    for (long long i = 0; i < 40000000000LL; i++) sum += i & 1;
    std::cout << a + b << '\n';
}
