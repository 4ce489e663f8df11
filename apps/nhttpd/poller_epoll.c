/* poller_epoll.c: the Linux poller (poller.h) on epoll, level-triggered like poll(2). */
#include "poller.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EPOLL_BATCH 256

struct poller {
    int epfd;
    struct epoll_event ready[EPOLL_BATCH];
};

struct poller *poller_create(void)
{
    struct poller *p = malloc(sizeof *p);
    if (p == NULL)
        return NULL;
    p->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (p->epfd < 0) {
        free(p);
        return NULL;
    }
    return p;
}

static int control(struct poller *p, int op, int fd, unsigned events, void *ctx)
{
    struct epoll_event e = {.data.ptr = ctx};
    e.events = (events & POLLER_IN ? EPOLLIN : 0) | (events & POLLER_OUT ? EPOLLOUT : 0);
    return epoll_ctl(p->epfd, op, fd, &e) == 0 ? 0 : -errno;
}

int poller_add(struct poller *p, int fd, unsigned events, void *ctx)
{
    return control(p, EPOLL_CTL_ADD, fd, events, ctx);
}

int poller_modify(struct poller *p, int fd, unsigned events, void *ctx)
{
    return control(p, EPOLL_CTL_MOD, fd, events, ctx);
}

int poller_remove(struct poller *p, int fd)
{
    return control(p, EPOLL_CTL_DEL, fd, 0, NULL);
}

int poller_wait(struct poller *p, struct poller_event *ev, int max, int timeout_ms)
{
    int n = epoll_wait(p->epfd, p->ready, max < EPOLL_BATCH ? max : EPOLL_BATCH, timeout_ms);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        uint32_t e = p->ready[i].events;
        ev[i].ctx = p->ready[i].data.ptr;
        ev[i].events = (e & EPOLLIN ? POLLER_IN : 0) | (e & EPOLLOUT ? POLLER_OUT : 0) |
                       (e & (EPOLLERR | EPOLLHUP) ? POLLER_ERR : 0);
    }
    return n;
}
