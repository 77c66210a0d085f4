#include <cmath>
#include <cstdio>
int main() {
    double a, b;
    std::scanf("%lf %lf", &a, &b);
    std::printf("%.9e\n", std::hypot(a, b));
}
