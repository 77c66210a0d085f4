/* ICPC output validator: input answer feedback_dir < team output. Exit 42 accepts, 43 rejects. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int read_line(FILE *f, char *buf, size_t size) {
    if (!fgets(buf, (int)size, f)) return 0;
    buf[strcspn(buf, "\r\n")] = 0;
    return 1;
}

int main(int argc, char **argv) {
    char expected[4096], got[4096], path[4200];
    if (argc < 4) return 1;
    FILE *answer = fopen(argv[2], "r");
    if (!answer || !read_line(answer, expected, sizeof expected)) return 1;
    int ok = read_line(stdin, got, sizeof got) && strlen(got) == strlen(expected);
    for (size_t i = 0; ok && expected[i]; i++)
        ok = tolower((unsigned char)expected[i]) == tolower((unsigned char)got[i]);
    snprintf(path, sizeof path, "%sjudgemessage.txt", argv[3]);
    FILE *message = fopen(path, "w");
    if (message) {
        fputs(ok ? "same line, any case\n" : "a different line\n", message);
        fclose(message);
    }
    return ok ? 42 : 43;
}
