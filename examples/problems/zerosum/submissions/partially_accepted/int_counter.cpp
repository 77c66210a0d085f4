#include <cstdio>
#include <unordered_map>
/* Counts in 32 bits: fine for small n, overflows on subtask 2's many pairs. */
int main() {
    int n;
    std::scanf("%d", &n);
    std::unordered_map<long long, int> count;
    int pairs = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        std::scanf("%lld", &x);
        pairs += count[-x];
        count[x]++;
    }
    std::printf("%d\n", pairs);
}
