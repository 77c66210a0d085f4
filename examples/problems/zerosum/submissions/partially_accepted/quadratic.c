#include <stdio.h>
/* O(n^2): enough for subtask 1, far too slow for subtask 2. */
static long long a[200000];
int main(void) {
    int n;
    scanf("%d", &n);
    for (int i = 0; i < n; i++) scanf("%lld", &a[i]);
    long long pairs = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (a[i] + a[j] == 0) pairs++;
    printf("%lld\n", pairs);
    return 0;
}
