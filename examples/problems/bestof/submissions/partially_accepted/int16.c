#include <stdio.h>
/* Squares in 16 bits: right only while the square fits. */
int main(void) {
    short x;
    if (scanf("%hd", &x) != 1) return 1;
    printf("%d\n", (short)(x * x));
    return 0;
}
