#include <stdlib.h>
#include <string.h>
#include <stdio.h>
int main(void) {
    for (int i = 0; i < 4096; i++) {
        char *p = malloc(1 << 20);
        memset(p, 'x', 1 << 20);
    }
    puts("0");
    return 0;
}
