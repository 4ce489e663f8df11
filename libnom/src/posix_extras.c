/* posix_extras.c: POSIX functions newlib 3.3 implements under reserved names only. */
#include <stdio.h>

ssize_t getline(char **line, size_t *cap, FILE *f)
{
    return __getline(line, cap, f);
}

ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    return __getdelim(line, cap, delim, f);
}
