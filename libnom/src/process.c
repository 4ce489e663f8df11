/* process.c: the process-level POSIX calls newlib expects from its host. A nom application is
 * one process with no file system, no children and no signals (paper 5): these calls say so
 * with the errno POSIX gives for it, except where a faithful answer exists (getpid is the
 * application id, exit ends the application, kill(self) ends it too). */
#include <errno.h>
#include <net/if.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nom/syscall.h>
#include <nom/time.h>
#include <nom/bb.h>
#include <pthread.h>
#include "fdtable.h"
#include "libnom.h"

void _exit(int status)
{
    console_flush(); /* an unfinished last line still shows */
    nom_sys_exit(status);
}

pid_t getpid(void) { return (pid_t)nom_app_id + 1; /* 0 is not a valid pid */ }
pid_t getppid(void) { return 1; }
/* An application is an unprivileged client of the kernel, not root: one ordinary user and
 * group id (ported servers such as memcached refuse to run as root). */
#define NOM_UID 1000
uid_t getuid(void) { return NOM_UID; }
uid_t geteuid(void) { return NOM_UID; }
gid_t getgid(void) { return NOM_UID; }
gid_t getegid(void) { return NOM_UID; }

/* Signals: the only process there is to send one to is this one, where it is raise()d
 * (signal.c: the handler runs, or the default action ends the application). */
int kill(pid_t pid, int sig)
{
    if (pid != getpid() && pid != 0) {
        errno = ESRCH;
        return -1;
    }
    return sig == 0 ? 0 : raise(sig);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    (void)how, (void)set;
    if (old)
        *old = 0;
    return 0;
}

static int no_files(void)
{
    errno = ENOENT;
    return -1;
}

int open(const char *path, int flags, ...) { (void)path, (void)flags; return no_files(); }
int stat(const char *path, struct stat *st) { (void)path, (void)st; return no_files(); }
int lstat(const char *path, struct stat *st) { (void)path, (void)st; return no_files(); }
int unlink(const char *path) { (void)path; return no_files(); }
int link(const char *a, const char *b) { (void)a, (void)b; return no_files(); }
int mkdir(const char *path, mode_t mode) { (void)path, (void)mode; return no_files(); }
int access(const char *path, int mode) { (void)path, (void)mode; return no_files(); }
int chdir(const char *path) { (void)path; return no_files(); }

/* Descriptors are pipes, sockets or the console, never regular files (POSIX: EINVAL). */
int ftruncate(int fd, off_t len)
{
    (void)len;
    if (fcntl(fd, F_GETFL) < 0)
        return -1;
    errno = EINVAL;
    return -1;
}

static mode_t file_mask = 022;

mode_t umask(mode_t mask)
{
    mode_t old = file_mask;
    file_mask = mask & 0777;
    return old;
}

/* One user (NOM_UID) and no user database: lookups find nobody; staying oneself is a no-op
 * and becoming anyone else is not permitted. */
struct passwd *getpwnam(const char *name)
{
    (void)name;
    return NULL;
}

static int only_self(unsigned id)
{
    if (id == NOM_UID)
        return 0;
    errno = EPERM;
    return -1;
}

int setuid(uid_t uid) { return only_self(uid); }
int setgid(gid_t gid) { return only_self(gid); }
int setgroups(int n, const gid_t *groups)
{
    (void)groups;
    return only_self(n == 0 ? NOM_UID : 0);
}

/* The application is already the leader of its only process group (POSIX: EPERM). */
pid_t setsid(void)
{
    errno = EPERM;
    return -1;
}

/* CPU time: the time since start-up that the core was not blocked in NOM_SYS_BLOCK, all of it
 * user time (the kernel does almost nothing for an application, paper 3.3). The board's
 * cpu_ns is exact but refreshed only when the kernel republishes the row; this is current, and
 * an upper bound if other applications share the vCPU. */
int getrusage(int who, struct rusage *ru)
{
    if (who != RUSAGE_SELF && who != RUSAGE_CHILDREN) {
        errno = EINVAL;
        return -1;
    }
    *ru = (struct rusage){ 0 };
    if (who == RUSAGE_SELF) {
        uint64_t ns = nom_tsc_to_ns(nom_tsc() - nom_start_tsc - nom_cpu_self()->blocked_tsc);
        ru->ru_utime.tv_sec = (time_t)(ns / 1000000000ull);
        ru->ru_utime.tv_usec = (suseconds_t)(ns / 1000 % 1000000);
    }
    return 0;
}

static int no_processes(void)
{
    errno = ENOSYS;
    return -1;
}

int fork(void) { return no_processes(); }
int execve(const char *p, char *const a[], char *const e[]) { (void)p, (void)a, (void)e; return no_processes(); }
int wait(int *status) { (void)status; errno = ECHILD; return -1; }

/* Entropy from the TSC's low bits mixed per call (splitmix64): nom has no RNG device yet, so
 * this is unpredictable enough for hash seeds, not for cryptography. */
int getentropy(void *buf, size_t len)
{
    static uint64_t state;
    if (len > 256) {
        errno = EIO;
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull ^ nom_tsc());
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        ((unsigned char *)buf)[i] = (unsigned char)(z ^ (z >> 31));
    }
    return 0;
}

long sysconf(int name)
{
    switch (name) {
    case _SC_PAGESIZE: return NOM_PAGE_SIZE;
    case _SC_OPEN_MAX: return NOM_FD_MAX;
    case _SC_CLK_TCK: return CLOCKS_PER_SEC;
    case _SC_NPROCESSORS_CONF: return nom_bb()->ncpus;
    case _SC_NPROCESSORS_ONLN: return 1; /* the cores libnom schedules on (one today) */
    case _SC_PHYS_PAGES: return (long)(nom_bb()->mem_total_bytes / NOM_PAGE_SIZE);
    case _SC_THREAD_KEYS_MAX: return PTHREAD_KEYS_MAX;
    case _SC_THREAD_STACK_MIN: return PTHREAD_STACK_MIN;
    case _SC_IOV_MAX: return 1024;
    default: errno = EINVAL; return -1;
    }
}

int getpagesize(void) { return NOM_PAGE_SIZE; }

static struct rlimit nofile = { NOM_FD_MAX, NOM_FD_MAX };

int getrlimit(int resource, struct rlimit *rl)
{
    if (resource < 0 || resource >= RLIMIT_NLIMITS) {
        errno = EINVAL;
        return -1;
    }
    *rl = resource == RLIMIT_NOFILE ? nofile : (struct rlimit){ RLIM_INFINITY, RLIM_INFINITY };
    return 0;
}

int setrlimit(int resource, const struct rlimit *rl)
{
    struct rlimit cur;
    if (getrlimit(resource, &cur) != 0 || rl->rlim_cur > rl->rlim_max) {
        errno = EINVAL;
        return -1;
    }
    if (rl->rlim_max > cur.rlim_max) {
        errno = EPERM;
        return -1;
    }
    if (resource == RLIMIT_NOFILE)
        nofile = *rl;
    return 0;
}

/* A nom application's NICs have no names (net/if.h). */
unsigned if_nametoindex(const char *name)
{
    (void)name;
    errno = ENXIO;
    return 0;
}

char *if_indextoname(unsigned index, char *name)
{
    (void)index, (void)name;
    errno = ENXIO;
    return NULL;
}
