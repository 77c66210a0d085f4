#include <iostream>
#include <string>
int main() {
    int lo = 1, hi = 1000;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        std::cout << "? " << mid << std::endl;
        std::string reply;
        std::cin >> reply;
        if (reply == "correct") return 0;
        if (reply == "lower") hi = mid - 1; else lo = mid + 1;
    }
}
