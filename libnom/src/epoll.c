/* epoll.c: epoll(7) over the descriptor table (<sys/epoll.h>; the lists are epset.c's).
 *
 * Why, beside poll(): poll() asks every descriptor it is given at every call, and while it
 * waits, at every readiness event of any file (the table's one event queue, fd.c). A server
 * holding thousands of connections pays for all of them per wake-up; libevent (memcached) and
 * nhttpd ask the same fds again and again. Here a kind names the file whose readiness gained a
 * bit (nom_fd_event_on), only the items watching that file become candidates, and a wait asks
 * only the candidates. Each epoll descriptor has its own wait queue.
 *
 * Why an epoll cannot watch another epoll: a file's event would have to climb to the sets
 * watching the set, and loops (a set watching itself through another) be refused, as Linux
 * does with its nesting checks; nothing nom runs nests them.
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <nom/fd.h>
#include <nom/sched.h>
#include <nom/time.h>
#include "epset.h"
#include "fdtable.h"
#include "libnom.h"

_Static_assert(sizeof(struct epoll_event) == 12, "Linux's x86-64 layout");
_Static_assert(sizeof(struct epset_report) == sizeof(struct epoll_event) &&
               offsetof(struct epset_report, events) == offsetof(struct epoll_event, events) &&
               offsetof(struct epset_report, data) == offsetof(struct epoll_event, data),
               "epset reports straight into epoll_wait's array");
_Static_assert(EPOLLIN == EPSET_IN && EPOLLOUT == EPSET_OUT && EPOLLERR == EPSET_ERR &&
               EPOLLHUP == EPSET_HUP && EPOLLPRI == EPSET_PRI && EPOLLRDHUP == EPSET_RDHUP &&
               EPOLLET == EPSET_ET && EPOLLONESHOT == EPSET_ONESHOT, "epset uses epoll's bits");
_Static_assert(POLLIN == EPOLLIN && POLLOUT == EPOLLOUT && POLLERR == EPOLLERR &&
               POLLHUP == EPOLLHUP && POLLPRI == EPOLLPRI, "a kind's poll bits are epoll's");

struct eventpoll {
    struct epset set;
    struct nom_waitq waiters;
    int waiting; /* threads inside epoll_wait: a close meanwhile leaves the freeing to them */
    bool closed;
};

static struct epset_registry registry;

static int fail(int err)
{
    errno = err;
    return -1;
}

/* The watched file's readiness, as poll() asks it (a kind without a poll op is always ready). */
static uint32_t item_poll(const struct epset_item *item)
{
    const struct nom_file *f = item->file;
    return (uint32_t)(uint16_t)(f->ops->poll ? f->ops->poll(f->priv) : (POLLIN | POLLOUT));
}

static short epoll_file_poll(void *priv)
{
    struct eventpoll *ep = priv;
    return epset_any_ready(&ep->set, item_poll) ? POLLIN : 0;
}

/* Another thread may sleep in epoll_wait on this set while its descriptor is closed (Linux
 * keeps the set alive for it too): the last one out frees it. */
static int epoll_file_close(void *priv)
{
    struct eventpoll *ep = priv;
    preempt_off();
    epset_clear(&registry, &ep->set);
    ep->closed = true;
    bool unused = ep->waiting == 0;
    preempt_on();
    if (unused)
        free(ep);
    return 0;
}

static const struct nom_file_ops epoll_ops = {
    .close = epoll_file_close,
    .poll = epoll_file_poll,
};

int fd_kind_is_epoll(const struct nom_file_ops *ops)
{
    return ops == &epoll_ops;
}

static void wake_set(struct epset *set, void *arg)
{
    (void)arg;
    sched_wake_ready(&((struct eventpoll *)set)->waiters);
}

void epoll_file_event(const void *key)
{
    epset_notify(&registry, key, wake_set, NULL);
}

void epoll_file_gone(const struct nom_file *f)
{
    epset_file_gone(&registry, f, f->priv);
}

int epoll_create1(int flags)
{
    if (flags & ~EPOLL_CLOEXEC)
        return fail(EINVAL);
    struct eventpoll *ep = calloc(1, sizeof *ep);
    if (!ep)
        return fail(ENOMEM);
    int fd = nom_fd_install(&epoll_ops, ep);
    if (fd < 0) {
        free(ep);
        return fail(-fd);
    }
    return fd;
}

int epoll_create(int size)
{
    return size <= 0 ? fail(EINVAL) : epoll_create1(0);
}

static int control(struct eventpoll *ep, int op, int fd, const struct epoll_event *event)
{
    struct nom_file *f = fdtable_get(fd_table(), fd);
    if (!f)
        return -EBADF;
    if (f->ops == &epoll_ops)
        return -EINVAL; /* see the header comment: no nesting */
    struct epset_item *item = epset_find(&registry, &ep->set, f, f->priv, fd);
    uint32_t events = event ? event->events & ~(EPOLLEXCLUSIVE | EPOLLWAKEUP) : 0;
    switch (op) {
    case EPOLL_CTL_ADD:
        if (item)
            return -EEXIST;
        return epset_add(&registry, &ep->set, f, f->priv, fd, events, event->data.u64)
                   ? 0 : -ENOMEM;
    case EPOLL_CTL_MOD:
        if (!item)
            return -ENOENT;
        if (event->events & EPOLLEXCLUSIVE)
            return -EINVAL; /* as on Linux: only at ADD */
        epset_modify(item, events, event->data.u64);
        return 0;
    default: /* EPOLL_CTL_DEL */
        if (!item)
            return -ENOENT;
        epset_remove(&registry, item);
        return 0;
    }
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
    if (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD && op != EPOLL_CTL_DEL)
        return fail(EINVAL);
    if (op != EPOLL_CTL_DEL && !event)
        return fail(EFAULT);
    if (fd == epfd)
        return fail(EINVAL);
    preempt_off();
    struct eventpoll *ep = nom_fd_priv(epfd, &epoll_ops);
    int r = !ep ? (fdtable_get(fd_table(), epfd) ? -EINVAL : -EBADF) : control(ep, op, fd, event);
    preempt_on();
    return r < 0 ? fail(-r) : 0;
}

struct wait_args {
    struct eventpoll *ep;
    struct epset_report *reports; /* the caller's struct epoll_event array */
    int max;
    int n; /* the last collect's count; the array then holds its reports */
};

static int collect(struct wait_args *a)
{
    return a->n = epset_collect(&a->ep->set, a->reports, a->max, item_poll);
}

/* Run by the waker (sched_wake_ready): the waiter's answer is collected there, as poll()'s is. */
static int wait_ready(void *arg)
{
    return collect(arg) != 0;
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
    if (maxevents <= 0)
        return fail(EINVAL);
    if (!events)
        return fail(EFAULT);
    preempt_off();
    struct eventpoll *ep = nom_fd_priv(epfd, &epoll_ops);
    if (!ep) {
        int bad = fdtable_get(fd_table(), epfd) ? EINVAL : EBADF;
        preempt_on();
        return fail(bad);
    }
    struct wait_args args = { ep, (struct epset_report *)events, maxevents, 0 };
    int n = collect(&args);
    if (n == 0 && timeout != 0) {
        uint64_t deadline = timeout < 0 ? 0
                            : nom_tsc() + nom_us_to_tsc((uint64_t)timeout * 1000) + 1;
        ep->waiting++;
        do {
            args.n = 0;
            if (sched_wait_ready(&ep->waiters, deadline, wait_ready, &args) != 0) {
                n = collect(&args);
                break;
            }
            /* Woken with an answer collected by the waker; without one (a spurious wake),
             * look again. */
            n = args.n ? args.n : collect(&args);
        } while (n == 0);
        if (--ep->waiting == 0 && ep->closed) {
            preempt_on();
            free(ep);
            return n;
        }
    }
    preempt_on();
    return n;
}

int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
                const sigset_t *sigmask)
{
    (void)sigmask; /* no asynchronous signals on nom (signal.c) */
    return epoll_wait(epfd, events, maxevents, timeout);
}
