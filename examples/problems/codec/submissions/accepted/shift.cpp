// The code shifts every letter by one (z wraps to a).
#include <iostream>
#include <string>

int main() {
    std::string command, text;
    std::cin >> command >> text;
    int shift = command == "encode" ? 1 : 25;
    for (char &c : text) c = char('a' + (c - 'a' + shift) % 26);
    std::cout << text << std::endl;
}
