#include <stdio.h>
int main(void) {
    int n;
    long long total = 0, x;
    if (scanf("%d", &n) != 1) return 1;
    while (n-- > 0 && scanf("%lld", &x) == 1) total += x;
    printf("%lld\n", total);
    return 0;
}
