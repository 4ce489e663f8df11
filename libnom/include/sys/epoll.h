/*
 * <sys/epoll.h> for nom (newlib has none): epoll over libnom's one descriptor table (pipes,
 * sockets, the console), src/epoll.c. Constants and struct layout are Linux's (x86-64: the
 * struct is packed, 12 bytes), which ported code may hardcode.
 *
 * Differences from Linux, each for a reason written in src/epoll.c:
 *   - EPOLLET reports a file again when it gains a readiness bit (nom/fd.h's events), not at
 *     every arrival: more data on a socket already readable is no new report. Read or write
 *     until EAGAIN, as edge-triggered code must anyway.
 *   - EPOLLRDHUP is accepted and never reported: a peer's shutdown shows as EPOLLIN with read()
 *     returning 0, as poll() shows it (sockets report POLLIN, POLLOUT, POLLERR, POLLHUP).
 *   - An epoll descriptor cannot be watched by another epoll (EINVAL); poll() and select()
 *     on it work (readable while some watched file is ready).
 *   - EPOLLEXCLUSIVE and EPOLLWAKEUP are accepted and change nothing (one core; no suspend).
 *   - epoll_pwait's signal mask is not applied: nom delivers no asynchronous signals.
 */
#ifndef NOM_SYS_EPOLL_H
#define NOM_SYS_EPOLL_H

#include <stdint.h>
#include <signal.h>
#include <sys/cdefs.h>

#define EPOLLIN        0x001u
#define EPOLLPRI       0x002u
#define EPOLLOUT       0x004u
#define EPOLLERR       0x008u
#define EPOLLHUP       0x010u
#define EPOLLRDNORM    0x040u
#define EPOLLRDBAND    0x080u
#define EPOLLWRNORM    0x100u
#define EPOLLWRBAND    0x200u
#define EPOLLMSG       0x400u
#define EPOLLRDHUP     0x2000u
#define EPOLLEXCLUSIVE (1u << 28)
#define EPOLLWAKEUP    (1u << 29)
#define EPOLLONESHOT   (1u << 30)
#define EPOLLET        (1u << 31)

#define EPOLL_CTL_ADD 1
#define EPOLL_CTL_DEL 2
#define EPOLL_CTL_MOD 3

#define EPOLL_CLOEXEC 02000000 /* Linux's O_CLOEXEC; newlib's O_CLOEXEC is hidden under -std=c11 */

typedef union epoll_data {
    void *ptr;
    int fd;
    uint32_t u32;
    uint64_t u64;
} epoll_data_t;

struct epoll_event {
    uint32_t events;
    epoll_data_t data;
} __attribute__((__packed__));

__BEGIN_DECLS
/* A new epoll descriptor; size must be positive and is otherwise ignored (as since Linux
 * 2.6.8). -1 with EINVAL, EMFILE or ENOMEM. */
int epoll_create(int size);
/* The same, flags 0 or EPOLL_CLOEXEC (nom has no exec: accepted). */
int epoll_create1(int flags);
/* Adds, modifies or removes fd in epfd's interest list. -1 with EBADF, EEXIST, ENOENT, EINVAL,
 * EFAULT (event NULL for ADD or MOD) or ENOMEM. */
int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event);
/* Waits up to timeout ms (-1: forever, 0: not at all) for ready files; returns how many of
 * events it filled (at most maxevents), 0 on timeout, -1 with EBADF, EINVAL or EFAULT. */
int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);
int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
                const sigset_t *sigmask);
__END_DECLS

#endif /* NOM_SYS_EPOLL_H */
