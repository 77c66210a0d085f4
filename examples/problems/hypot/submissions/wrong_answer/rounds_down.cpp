#include <cmath>
#include <cstdio>
int main() {
    double a, b;
    std::scanf("%lf %lf", &a, &b);
    std::printf("%lld\n", (long long)std::hypot(a, b));
}
