/* poller_poll.c: the poller (poller.h) on poll(2), which nom's network layer implements.
 * Registrations live in a dense pollfd array (removal swaps the last entry in) plus an
 * fd-indexed map to the slot, so add/modify/remove are O(1); a wait is O(registered fds). */
#include "poller.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

struct poller {
    struct pollfd *fds;
    void **ctx;
    size_t n, cap;
    int *slot_of; /* fd -> slot, -1 if not registered */
    size_t map_cap;
    size_t next;  /* where the next scan of ready fds starts: fairness when max < ready */
};

struct poller *poller_create(void)
{
    return calloc(1, sizeof(struct poller));
}

static short poll_events(unsigned events)
{
    return (short)((events & POLLER_IN ? POLLIN : 0) | (events & POLLER_OUT ? POLLOUT : 0));
}

static int grow_map(struct poller *p, int fd)
{
    size_t cap = p->map_cap ? p->map_cap : 64;
    while (cap <= (size_t)fd)
        cap *= 2;
    int *m = realloc(p->slot_of, cap * sizeof *m);
    if (m == NULL)
        return -ENOMEM;
    for (size_t i = p->map_cap; i < cap; i++)
        m[i] = -1;
    p->slot_of = m;
    p->map_cap = cap;
    return 0;
}

static int grow_slots(struct poller *p)
{
    size_t cap = p->cap ? p->cap * 2 : 64;
    struct pollfd *f = realloc(p->fds, cap * sizeof *f);
    if (f == NULL)
        return -ENOMEM;
    p->fds = f;
    void **c = realloc(p->ctx, cap * sizeof *c);
    if (c == NULL)
        return -ENOMEM;
    p->ctx = c;
    p->cap = cap;
    return 0;
}

static int slot(const struct poller *p, int fd)
{
    return fd >= 0 && (size_t)fd < p->map_cap ? p->slot_of[fd] : -1;
}

int poller_add(struct poller *p, int fd, unsigned events, void *ctx)
{
    int r;
    if (fd < 0)
        return -EINVAL;
    if ((size_t)fd >= p->map_cap && (r = grow_map(p, fd)) != 0)
        return r;
    if (p->slot_of[fd] >= 0)
        return -EEXIST;
    if (p->n == p->cap && (r = grow_slots(p)) != 0)
        return r;
    p->fds[p->n] = (struct pollfd){.fd = fd, .events = poll_events(events)};
    p->ctx[p->n] = ctx;
    p->slot_of[fd] = (int)p->n++;
    return 0;
}

int poller_modify(struct poller *p, int fd, unsigned events, void *ctx)
{
    int s = slot(p, fd);
    if (s < 0)
        return -ENOENT;
    p->fds[s].events = poll_events(events);
    p->ctx[s] = ctx;
    return 0;
}

int poller_remove(struct poller *p, int fd)
{
    int s = slot(p, fd);
    if (s < 0)
        return -ENOENT;
    p->fds[s] = p->fds[--p->n];
    p->ctx[s] = p->ctx[p->n];
    p->slot_of[p->fds[s].fd] = s;
    p->slot_of[fd] = -1;
    return 0;
}

int poller_wait(struct poller *p, struct poller_event *ev, int max, int timeout_ms)
{
    int ready = poll(p->fds, (nfds_t)p->n, timeout_ms);
    if (ready < 0)
        return errno == EINTR ? 0 : -errno;
    int got = 0;
    size_t start = p->next < p->n ? p->next : 0;
    for (size_t k = 0; k < p->n && got < ready && got < max; k++) {
        size_t i = (start + k) % p->n;
        short r = p->fds[i].revents;
        if (r == 0)
            continue;
        ev[got].ctx = p->ctx[i];
        ev[got].events = (r & POLLIN ? POLLER_IN : 0) | (r & POLLOUT ? POLLER_OUT : 0) |
                         (r & (POLLERR | POLLHUP | POLLNVAL) ? POLLER_ERR : 0);
        got++;
        p->next = i + 1;
    }
    return got;
}
