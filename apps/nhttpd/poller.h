/*
 * poller.h: readiness of many file descriptors, behind one small interface.
 *
 * Contract: level-triggered (an fd stays reported while it is ready and interested), like
 * poll(2). Each registered fd carries a context pointer returned with its events. An fd is
 * registered at most once. One backend, poller_epoll.c, on Linux's epoll and on libnom's
 * (libnom/src/epoll.c), so that many thousands of mostly idle connections cost nothing per
 * wake-up on either.
 */
#ifndef NHTTPD_POLLER_H
#define NHTTPD_POLLER_H

#define POLLER_IN  0x1u /* readable, or a listener has a connection to accept */
#define POLLER_OUT 0x2u /* writable */
#define POLLER_ERR 0x4u /* error or hang-up: reported whatever the interest */

struct poller;

struct poller_event {
    void *ctx;
    unsigned events; /* POLLER_* */
};

/* A new poller, or NULL (out of memory or descriptors). */
struct poller *poller_create(void);

/* Registers fd with interest events (POLLER_IN|POLLER_OUT, or 0 to hold it quiet).
 * Returns 0 or -errno (-ENOMEM, -EEXIST). */
int poller_add(struct poller *p, int fd, unsigned events, void *ctx);

/* Changes a registered fd's interest. Returns 0 or -errno (-ENOENT: not registered). */
int poller_modify(struct poller *p, int fd, unsigned events, void *ctx);

/* Forgets fd; call before closing it. Returns 0 or -ENOENT. */
int poller_remove(struct poller *p, int fd);

/* Waits up to timeout_ms (-1: forever) and fills at most max events. Returns the number of
 * events (0 on timeout or EINTR) or -errno. */
int poller_wait(struct poller *p, struct poller_event *ev, int max, int timeout_ms);

#endif /* NHTTPD_POLLER_H */
