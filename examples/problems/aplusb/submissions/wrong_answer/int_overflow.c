#include <stdio.h>
/* 32-bit arithmetic: wrong once the sum leaves the int range. */
int main(void) {
    int a, b;
    scanf("%d %d", &a, &b);
    printf("%d\n", a + b);
    return 0;
}
