/* lines.c: does a console line stay whole when an application writes it in pieces while
 * another application writes too (console.c's line buffer)? `lines NAME COUNT` writes COUNT
 * lines "lines NAME I whole", each with three write()s 2 ms apart (time enough for the other
 * application's pieces to land in between if pieces went out as they came), then
 * "lines NAME done" without a newline, which must still show at exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void piece(const char *s)
{
    struct timespec gap = {0, 2000000};
    write(1, s, strlen(s));
    nanosleep(&gap, NULL);
}

int main(int argc, char **argv)
{
    char num[16];
    if (argc != 3)
        return 2;
    int count = atoi(argv[2]);
    for (int i = 0; i < count; i++) {
        snprintf(num, sizeof num, "%d", i);
        piece("lines ");
        piece(argv[1]);
        piece(" ");
        piece(num);
        piece(" whole\n");
    }
    piece("lines ");
    piece(argv[1]);
    piece(" done");
    return 0;
}
