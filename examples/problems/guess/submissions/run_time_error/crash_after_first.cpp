#include <iostream>
#include <string>
int main() {
    std::cout << "? 500" << std::endl;
    std::string reply;
    std::cin >> reply;
    if (reply != "correct") {
        int *p = nullptr;
        return *p;
    }
}
