/*
 * libnom's <sys/resource.h>: newlib's getrusage, plus resource limits (memcached raises
 * RLIMIT_NOFILE and RLIMIT_CORE at start). nom has one real limit: the descriptor table's size
 * (4096); getrlimit reports it, the others are RLIM_INFINITY, and setrlimit accepts any value
 * up to the hard limit (EPERM above it). Constants have Linux's values.
 */
#ifndef NOM_SYS_RESOURCE_H
#define NOM_SYS_RESOURCE_H

#include_next <sys/resource.h>
#include <sys/cdefs.h>

typedef unsigned long rlim_t;

#define RLIM_INFINITY (~0ul)
#define RLIM_SAVED_MAX RLIM_INFINITY
#define RLIM_SAVED_CUR RLIM_INFINITY

#define RLIMIT_CPU 0
#define RLIMIT_FSIZE 1
#define RLIMIT_DATA 2
#define RLIMIT_STACK 3
#define RLIMIT_CORE 4
#define RLIMIT_RSS 5
#define RLIMIT_NPROC 6
#define RLIMIT_NOFILE 7
#define RLIMIT_MEMLOCK 8
#define RLIMIT_AS 9
#define RLIMIT_NLIMITS 16

struct rlimit {
    rlim_t rlim_cur;
    rlim_t rlim_max;
};

__BEGIN_DECLS
/* 0, or -1 with EINVAL (unknown resource) or EFAULT. */
int getrlimit(int resource, struct rlimit *rlim);
/* 0, or -1 with EINVAL (unknown resource, cur > max) or EPERM (above the hard limit). */
int setrlimit(int resource, const struct rlimit *rlim);
__END_DECLS

#endif /* NOM_SYS_RESOURCE_H */
