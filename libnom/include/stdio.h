/*
 * libnom's <stdio.h>: newlib's, plus POSIX 2008's getline and getdelim, which newlib 3.3 has
 * only under reserved names (__getline, __getdelim); libnom defines them (src/posix_extras.c).
 */
#ifndef NOM_STDIO_H
#define NOM_STDIO_H

#include_next <stdio.h>

_BEGIN_STD_C
ssize_t getline(char **line, size_t *cap, FILE *f);
ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f);
_END_STD_C

#endif /* NOM_STDIO_H */
