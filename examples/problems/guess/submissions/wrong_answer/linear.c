#include <stdio.h>
#include <string.h>
int main(void) {
    char reply[32];
    for (int y = 1; y <= 1000; y++) {
        printf("? %d\n", y);
        fflush(stdout);
        if (scanf("%31s", reply) != 1 || strcmp(reply, "correct") == 0) return 0;
    }
    return 0;
}
