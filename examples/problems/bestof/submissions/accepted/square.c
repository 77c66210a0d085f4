#include <stdio.h>
int main(void) {
    long long x;
    if (scanf("%lld", &x) != 1) return 1;
    printf("%lld\n", x * x);
    return 0;
}
