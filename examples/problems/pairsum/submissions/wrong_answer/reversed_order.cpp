#include <cstdio>
#include <unordered_map>
#include <vector>
int main() {
    long long n, t;
    std::scanf("%lld %lld", &n, &t);
    std::vector<long long> a(n);
    for (auto &x : a) std::scanf("%lld", &x);
    std::unordered_map<long long, long long> seen;
    for (long long j = 0; j < n; j++) {
        auto it = seen.find(t - a[j]);
        if (it != seen.end()) {
            std::printf("%lld %lld\n", j + 1, it->second + 1);  // j > i: violates i < j
            return 0;
        }
        seen.emplace(a[j], j);
    }
    std::puts("-1");
}
