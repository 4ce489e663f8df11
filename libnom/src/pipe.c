/* pipe.c: pipes as a descriptor kind (memcached and libevent wake threads through them). A
 * 64 KiB ring shared by a read end and a write end; POSIX semantics: EOF when no writer is
 * left, EPIPE when no reader is (nom has no SIGPIPE). socketpair(AF_UNIX, SOCK_STREAM) is two
 * pipes crossed: each end reads one and writes the other (libevent's fallback wake-up). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nom/fd.h>
#include <nom/sched.h>
#include "fdtable.h"
#include "libnom.h"

#define PIPE_SIZE 65536

struct pipe {
    size_t head, len; /* ring: data at [head, head + len) mod PIPE_SIZE */
    int readers, writers;
    /* The files whose readiness this pipe makes, by the priv their events name (nom/fd.h): a
     * plain pipe's two ends both have the pipe as priv (NULL here); a socketpair's pipe is
     * written by one end and read by the other (their struct pair_end). */
    const void *pair_ends[2];
    unsigned char buf[PIPE_SIZE];
};

/* The pipe's readiness may have gained a bit: for the files it belongs to. */
static void pipe_event(struct pipe *p)
{
    if (p->pair_ends[0])
        fd_event_files(p->pair_ends, 2);
    else
        nom_fd_event(p);
}

static ssize_t pipe_read(void *priv, void *dst, size_t n)
{
    struct pipe *p = priv;
    preempt_off();
    size_t got = 0;
    while (got < n && p->len) {
        size_t chunk = PIPE_SIZE - p->head;
        if (chunk > p->len)
            chunk = p->len;
        if (chunk > n - got)
            chunk = n - got;
        memcpy((char *)dst + got, p->buf + p->head, chunk);
        p->head = (p->head + chunk) % PIPE_SIZE;
        p->len -= chunk;
        got += chunk;
    }
    int writers = p->writers;
    preempt_on();
    if (got)
        pipe_event(p);
    return got || n == 0 || writers == 0 ? (ssize_t)got : -EAGAIN;
}

/* Writes of up to PIPE_BUF bytes are atomic: all or nothing (POSIX). */
static ssize_t pipe_write(void *priv, const void *src, size_t n)
{
    struct pipe *p = priv;
    ssize_t ret;
    preempt_off();
    size_t space = PIPE_SIZE - p->len;
    if (p->readers == 0)
        ret = -EPIPE;
    else if (space == 0 || (n <= PIPE_BUF && space < n))
        ret = -EAGAIN;
    else {
        size_t put = n < space ? n : space;
        for (size_t done = 0; done < put;) {
            size_t tail = (p->head + p->len) % PIPE_SIZE;
            size_t chunk = PIPE_SIZE - tail < put - done ? PIPE_SIZE - tail : put - done;
            memcpy(p->buf + tail, (const char *)src + done, chunk);
            p->len += chunk;
            done += chunk;
        }
        ret = (ssize_t)put;
    }
    preempt_on();
    if (ret > 0)
        pipe_event(p);
    return ret;
}

static short pipe_poll_read(void *priv)
{
    struct pipe *p = priv;
    return (short)((p->len ? POLLIN : 0) | (p->writers == 0 ? POLLHUP : 0));
}

static short pipe_poll_write(void *priv)
{
    struct pipe *p = priv;
    return (short)(p->readers == 0 ? POLLERR : PIPE_SIZE - p->len >= PIPE_BUF ? POLLOUT : 0);
}

/* One end closed: the other sees POLLHUP or POLLERR, or the pipe goes with its last end. */
static void pipe_put(struct pipe *p)
{
    if (p->readers || p->writers)
        pipe_event(p);
    else
        free(p);
}

static int pipe_close_read(void *priv)
{
    struct pipe *p = priv;
    p->readers--;
    pipe_put(p);
    return 0;
}

static int pipe_close_write(void *priv)
{
    struct pipe *p = priv;
    p->writers--;
    pipe_put(p);
    return 0;
}

static const struct nom_file_ops pipe_read_ops = {
    .read = pipe_read, .close = pipe_close_read, .poll = pipe_poll_read,
};
static const struct nom_file_ops pipe_write_ops = {
    .write = pipe_write, .close = pipe_close_write, .poll = pipe_poll_write,
};

struct pair_end {
    struct pipe *in, *out;
};

static ssize_t pair_read(void *priv, void *dst, size_t n)
{
    return pipe_read(((struct pair_end *)priv)->in, dst, n);
}

static ssize_t pair_write(void *priv, const void *src, size_t n)
{
    return pipe_write(((struct pair_end *)priv)->out, src, n);
}

static short pair_poll(void *priv)
{
    struct pair_end *e = priv;
    return (short)(pipe_poll_read(e->in) | pipe_poll_write(e->out));
}

static int pair_close(void *priv)
{
    struct pair_end *e = priv;
    pipe_close_read(e->in);
    pipe_close_write(e->out);
    free(e);
    return 0;
}

static const struct nom_file_ops pair_ops = {
    .read = pair_read, .write = pair_write, .close = pair_close, .poll = pair_poll,
};

int fd_kind_is_pipe(const struct nom_file_ops *ops)
{
    return ops == &pipe_read_ops || ops == &pipe_write_ops;
}

static int set_nonblocking(const int fds[2])
{
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    return 0;
}

int pipe2(int fds[2], int flags)
{
    struct pipe *p = calloc(1, sizeof *p);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    p->readers = p->writers = 1;
    fds[0] = nom_fd_install(&pipe_read_ops, p);
    fds[1] = fds[0] < 0 ? -1 : nom_fd_install(&pipe_write_ops, p);
    if (fds[1] < 0) {
        int err = fds[0] < 0 ? -fds[0] : -fds[1];
        if (fds[0] >= 0) {
            p->writers = 0;
            close(fds[0]);
        } else {
            free(p);
        }
        errno = err;
        return -1;
    }
    return flags & O_NONBLOCK ? set_nonblocking(fds) : 0;
}

int pipe(int fds[2])
{
    return pipe2(fds, 0);
}

int socketpair(int domain, int type, int protocol, int sv[2])
{
    if (domain != AF_UNIX || (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_STREAM ||
        protocol != 0) {
        errno = domain != AF_UNIX ? EAFNOSUPPORT : EPROTONOSUPPORT;
        return -1;
    }
    struct pipe *ab = calloc(1, sizeof *ab), *ba = calloc(1, sizeof *ba);
    struct pair_end *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    if (!ab || !ba || !a || !b) {
        free(ab), free(ba), free(a), free(b);
        errno = ENOMEM;
        return -1;
    }
    ab->readers = ab->writers = ba->readers = ba->writers = 1;
    *a = (struct pair_end){ ba, ab };
    *b = (struct pair_end){ ab, ba };
    ab->pair_ends[0] = ba->pair_ends[1] = a;
    ab->pair_ends[1] = ba->pair_ends[0] = b;
    sv[0] = nom_fd_install(&pair_ops, a);
    sv[1] = sv[0] < 0 ? -1 : nom_fd_install(&pair_ops, b);
    if (sv[1] < 0) {
        int err = sv[0] < 0 ? -sv[0] : -sv[1];
        if (sv[0] >= 0) {
            close(sv[0]); /* pair_close(a), then b's close frees both pipes */
            pair_close(b);
        } else {
            free(ab), free(ba), free(a), free(b);
        }
        errno = err;
        return -1;
    }
    return type & SOCK_NONBLOCK ? set_nonblocking(sv) : 0;
}
