/*
 * libnom's <sys/stat.h>: newlib's, plus lstat (declared by newlib only for RTEMS and Cygwin).
 * nom has no file system, so lstat, like stat, fails with ENOENT (src/process.c).
 */
#ifndef NOM_SYS_STAT_H
#define NOM_SYS_STAT_H

#include_next <sys/stat.h>

_BEGIN_STD_C
int lstat(const char *__restrict path, struct stat *__restrict st);
_END_STD_C

#endif /* NOM_SYS_STAT_H */
