#include <iostream>
#include <string>

int main() {
    long long n;
    std::cin >> n;
    long long low = 1, high = n;
    while (low <= high) {
        long long mid = low + (high - low) / 2;
        std::cout << "? " << mid << std::endl;
        std::string reply;
        if (!(std::cin >> reply) || reply == "=") return 0;
        if (reply == "<") low = mid + 1; else high = mid - 1;
    }
}
