/* process.c: the process-level POSIX calls newlib expects from its host. A nom application is
 * one process with no file system, no children and no signals (paper 5): these calls say so
 * with the errno POSIX gives for it, except where a faithful answer exists (getpid is the
 * application id, exit ends the application, kill(self) ends it too). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nom/syscall.h>
#include <nom/time.h>
#include <nom/bb.h>
#include <pthread.h>
#include "libnom.h"

void _exit(int status)
{
    nom_sys_exit(status);
}

pid_t getpid(void) { return (pid_t)nom_app_id + 1; /* 0 is not a valid pid */ }
pid_t getppid(void) { return 1; }
uid_t getuid(void) { return 0; }
uid_t geteuid(void) { return 0; }
gid_t getgid(void) { return 0; }
gid_t getegid(void) { return 0; }

/* Signals: delivering one to ourselves ends the application with 128 + sig, as an unhandled
 * signal would; there is nothing else to send one to. */
int kill(pid_t pid, int sig)
{
    if (pid != getpid() && pid != 0) {
        errno = ESRCH;
        return -1;
    }
    if (sig == 0)
        return 0;
    nom_sys_exit(128 + sig);
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
int unlink(const char *path) { (void)path; return no_files(); }
int link(const char *a, const char *b) { (void)a, (void)b; return no_files(); }
int mkdir(const char *path, mode_t mode) { (void)path, (void)mode; return no_files(); }

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
    case _SC_OPEN_MAX: return 1024;
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

static struct rlimit nofile = { 1024, 1024 };

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
