/* poll.c: poll() and select() over every kind of descriptor. Readiness is each kind's poll()
 * op; waiting is on the table's event queue, which every kind kicks (nom_fd_event) when
 * readiness may change. The scan and the start of the wait run with preemption disabled, so
 * an event between them cannot be lost. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/select.h>
#include <nom/sched.h>
#include <nom/time.h>
#include "fdtable.h"
#include "libnom.h"

static short fd_revents(int fd, short events)
{
    struct nom_file *f = fdtable_get(fd_table(), fd);
    if (!f)
        return POLLNVAL;
    short rev = f->ops->poll ? f->ops->poll(f->priv) : (POLLIN | POLLOUT);
    return rev & (short)(events | POLLERR | POLLHUP);
}

static uint64_t deadline_ms(int timeout_ms)
{
    return timeout_ms < 0 ? 0 : nom_tsc() + nom_us_to_tsc((uint64_t)timeout_ms * 1000) + 1;
}

static int poll_scan(struct pollfd *fds, nfds_t nfds)
{
    int n = 0;
    for (nfds_t i = 0; i < nfds; i++) {
        fds[i].revents = fds[i].fd < 0 ? 0 : fd_revents(fds[i].fd, fds[i].events);
        n += fds[i].revents != 0;
    }
    return n;
}

struct poll_args {
    struct pollfd *fds;
    nfds_t nfds;
    int n; /* poll_ready's last count; fds then hold its revents */
};

static int poll_ready(void *arg)
{
    struct poll_args *a = arg;
    return (a->n = poll_scan(a->fds, a->nfds)) != 0;
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
    if (nfds > NOM_FD_MAX) {
        errno = EINVAL;
        return -1;
    }
    uint64_t deadline = deadline_ms(timeout);
    struct poll_args args = { fds, nfds, 0 };
    int n;
    preempt_off();
    n = poll_scan(fds, nfds);
    while (n == 0 && timeout != 0) {
        args.n = 0;
        if (fd_wait_event(deadline, poll_ready, &args) != 0) {
            n = poll_scan(fds, nfds);
            break;
        }
        /* Woken by an event: the waker's scan (poll_ready) is the answer, already in fds; a
         * wake-up without one scans again (issue 16: one scan of every fd less per wait). */
        n = args.n ? args.n : poll_scan(fds, nfds);
    }
    preempt_on();
    return n;
}

static int select_scan(int nfds, fd_set *r, fd_set *w, fd_set *e, fd_set *ro, fd_set *wo,
                       fd_set *eo)
{
    int n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        short ev = (short)((r && FD_ISSET(fd, r) ? POLLIN : 0) |
                           (w && FD_ISSET(fd, w) ? POLLOUT : 0) |
                           (e && FD_ISSET(fd, e) ? POLLPRI : 0));
        if (!ev)
            continue;
        short rev = fd_revents(fd, ev);
        if (rev & POLLNVAL)
            return -EBADF;
        if (r && FD_ISSET(fd, r) && (rev & (POLLIN | POLLHUP | POLLERR)))
            FD_SET(fd, ro), n++;
        if (w && FD_ISSET(fd, w) && (rev & (POLLOUT | POLLERR)))
            FD_SET(fd, wo), n++;
        if (e && FD_ISSET(fd, e) && (rev & POLLPRI))
            FD_SET(fd, eo), n++;
    }
    return n;
}

struct select_args {
    int nfds;
    fd_set *r, *w, *e;
    fd_set ro, wo, eo; /* select_ready's last scan, and its count: */
    int n;
};

static int select_ready(void *arg)
{
    struct select_args *a = arg;
    FD_ZERO(&a->ro), FD_ZERO(&a->wo), FD_ZERO(&a->eo);
    return (a->n = select_scan(a->nfds, a->r, a->w, a->e, &a->ro, &a->wo, &a->eo)) != 0;
}

static int select_deadline(int nfds, fd_set *r, fd_set *w, fd_set *e, uint64_t deadline,
                           int nowait)
{
    struct select_args args = { .nfds = nfds, .r = r, .w = w, .e = e };
    fd_set ro, wo, eo;
    int n;
    if (nfds < 0 || nfds > FD_SETSIZE) {
        errno = EINVAL;
        return -1;
    }
    preempt_off();
    FD_ZERO(&ro), FD_ZERO(&wo), FD_ZERO(&eo);
    n = select_scan(nfds, r, w, e, &ro, &wo, &eo);
    while (n == 0 && !nowait) {
        args.n = 0;
        if (fd_wait_event(deadline, select_ready, &args) != 0)
            break;
        if (args.n != 0) { /* the waker's scan is the answer, as in poll() above */
            ro = args.ro, wo = args.wo, eo = args.eo;
            n = args.n;
        } else {
            FD_ZERO(&ro), FD_ZERO(&wo), FD_ZERO(&eo);
            n = select_scan(nfds, r, w, e, &ro, &wo, &eo);
        }
    }
    preempt_on();
    if (n < 0) {
        errno = -n;
        return -1;
    }
    if (r) memcpy(r, &ro, sizeof ro);
    if (w) memcpy(w, &wo, sizeof wo);
    if (e) memcpy(e, &eo, sizeof eo);
    return n;
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    uint64_t us = tv ? (uint64_t)tv->tv_sec * 1000000 + (uint64_t)tv->tv_usec : 0;
    int nowait = tv && us == 0;
    return select_deadline(nfds, r, w, e, tv && us ? nom_tsc() + nom_us_to_tsc(us) : 0, nowait);
}

int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
            const sigset_t *mask)
{
    (void)mask; /* no signals on nom */
    uint64_t ns = ts ? (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec : 0;
    int nowait = ts && ns == 0;
    return select_deadline(nfds, r, w, e, ts && ns ? nom_tsc() + nom_ns_to_tsc(ns) : 0, nowait);
}
