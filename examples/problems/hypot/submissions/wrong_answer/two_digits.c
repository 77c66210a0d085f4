#include <math.h>
#include <stdio.h>
int main(void) {
    double a, b;
    scanf("%lf %lf", &a, &b);
    printf("%.2f\n", sqrt(a * a + b * b));
    return 0;
}
