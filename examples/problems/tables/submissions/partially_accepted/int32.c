/* 32-bit sums: right on the small group, wrong on the large one (40). */
#include <stdio.h>

int main(void) {
    int k, sum = 0;
    long long x;
    if (scanf("%d", &k) != 1) return 1;
    FILE *table = fopen("table.txt", "r");
    if (!table) return 1;
    for (int i = 0; i < k && fscanf(table, "%lld", &x) == 1; ++i)
        sum += (int)x;
    printf("%d\n", sum);
    return 0;
}
