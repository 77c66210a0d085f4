#include <cstdio>
#include <unordered_map>
int main() {
    int n;
    std::scanf("%d", &n);
    std::unordered_map<long long, long long> count;
    long long pairs = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        auto it = count.find(-x);
        if (it != count.end()) pairs += it->second;
        count[x]++;
    }
    std::printf("%lld\n", pairs);
}
