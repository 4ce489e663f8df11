/* sock.c: socket lifecycle, the fd-table file kind, readiness reports and blocking (sock.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include <nom/fd.h>
#include <nom/sched.h>
#include <nom/time.h>

#include "netloop.h"
#include "sock.h"

struct nomsock *nomsock_alloc(int type)
{
    struct nomsock *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->type = type;
    s->state = NS_OPEN;
    s->sndbuf = TCP_SND_BUF;
    s->rcvbuf = TCP_WND;
    return s;
}

void nomsock_free(struct nomsock *s)
{
    free(s->dq);
    free(s);
}

long nomsock_ret(long r)
{
    if (r >= 0)
        return r;
    errno = (int)-r;
    return -1;
}

struct nomsock *nomsock_get(int fd)
{
    struct nomsock *s = fd < 0 ? NULL : nom_fd_priv(fd, &nomsock_ops);
    if (s == NULL)
        errno = nom_fd_nonblocking(fd) < 0 ? EBADF : ENOTSOCK;
    return s;
}

int nomsock_install(struct nomsock *s, int nonblock)
{
    int fd = nom_fd_install(&nomsock_ops, s);
    if (fd < 0) {
        nom_preempt_disable();
        nomsock_ops.close(s);
        nom_preempt_enable();
        return (int)nomsock_ret(fd);
    }
    if (nonblock)
        fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* lwIP's err_t to errno, for the calls that return one (err.c's table needs LWIP_SOCKET). */
int nomsock_err_from_lwip(err_t err)
{
    switch (err) {
    case ERR_OK:         return 0;
    case ERR_MEM:        return ENOMEM;
    case ERR_BUF:        return ENOBUFS;
    case ERR_TIMEOUT:    return ETIMEDOUT;
    case ERR_RTE:        return EHOSTUNREACH;
    case ERR_INPROGRESS: return EINPROGRESS;
    case ERR_VAL:        return EINVAL;
    case ERR_WOULDBLOCK: return EWOULDBLOCK;
    case ERR_USE:        return EADDRINUSE;
    case ERR_ALREADY:    return EALREADY;
    case ERR_ISCONN:     return EISCONN;
    case ERR_CONN:       return ENOTCONN;
    case ERR_IF:         return ENETUNREACH;
    case ERR_ABRT:       return ECONNABORTED;
    case ERR_RST:        return ECONNRESET;
    case ERR_CLSD:       return ENOTCONN;
    case ERR_ARG:        return EINVAL;
    default:             return EIO;
    }
}

short nomsock_readiness(struct nomsock *s)
{
    return s->type == SOCK_STREAM ? tcpsock_readiness(s) : udpsock_readiness(s);
}

/* Reports only new readiness: libnom's poll and blocking I/O re-check every file on each
 * event, so an event per segment would wake every poller for nothing. */
void nomsock_changed(struct nomsock *s)
{
    short now = nomsock_readiness(s);
    short gained = now & ~s->notified;
    s->notified = now;
    if (gained) {
        /* The event's waiters and epoll sets ask this socket's readiness at once, and nothing
         * changes it meanwhile: they get `notified` instead of a second evaluation (sock_poll;
         * about 20 instructions per NetPIPE message, issue 16). */
        s->reporting = 1;
        nom_fd_event(s);
        s->reporting = 0;
    }
}

int nomsock_block(int fd, short events, uint64_t timeout_us)
{
    uint64_t deadline = timeout_us ? nom_tsc() + nom_us_to_tsc(timeout_us) : 0;
    int r = nom_fd_wait(fd, events, deadline);
    return r == -ETIMEDOUT ? -EAGAIN : (r < 0 ? r : 0);
}

/* ---- The file kind (nom/fd.h): every op non-blocking; libnom blocks for us ---- */

/* read and write run with preemption already off (NOM_FILE_PREEMPT_OFF below): the stack's
 * lock is held by libnom's caller. */
static ssize_t sock_read(void *priv, void *buf, size_t n)
{
    struct nomsock *s = priv;
    struct iovec iov = { buf, n };
    ssize_t r;
    if (s->type == SOCK_STREAM)
        r = tcpsock_recv_nb(s, buf, n, 0);
    else
        r = udpsock_recv_nb(s, &iov, 1, 0, NULL, NULL, NULL);
    netloop_commit();
    return r;
}

static ssize_t sock_write(void *priv, const void *buf, size_t n)
{
    struct nomsock *s = priv;
    struct iovec iov = { (void *)buf, n };
    ssize_t r;
    if (s->type == SOCK_STREAM)
        r = tcpsock_send_nb(s, buf, n, 0);
    else
        r = udpsock_send_nb(s, &iov, 1, NULL, 0);
    netloop_commit();
    return r;
}

static int sock_close(void *priv)
{
    struct nomsock *s = priv;
    nom_preempt_disable();
    if (s->type == SOCK_STREAM)
        tcpsock_close_nb(s);
    else
        udpsock_close_nb(s);
    nomsock_free(s);
    /* Paper 3.6, rx condition (3): a connection closed, so no more packets are coming for
     * it: hand anything the driver holds to the stack now. */
    netloop_rx_flush();
    netloop_commit();
    nom_preempt_enable();
    return 0;
}

/* Preemption is off already (nom/fd.h: libnom polls under it). */
static short sock_poll(void *priv)
{
    struct nomsock *s = priv;
    if (s->reporting)
        return s->notified;
    short r = nomsock_readiness(s);
    s->notified = r;
    return r;
}

/* FIONREAD; FIONBIO is libnom's (the table keeps O_NONBLOCK). */
static int sock_ioctl(void *priv, unsigned long request, void *arg)
{
    struct nomsock *s = priv;
    if (request != FIONREAD)
        return -ENOTTY;
    nom_preempt_disable();
    if (s->type == SOCK_STREAM)
        *(int *)arg = (int)s->rx_bytes;
    else
        *(int *)arg = s->dq_len ? (int)s->dq[s->dq_head].p->tot_len : 0;
    nom_preempt_enable();
    return 0;
}

const struct nom_file_ops nomsock_ops = {
    .read = sock_read,
    .write = sock_write,
    .close = sock_close,
    .poll = sock_poll,
    .ioctl = sock_ioctl,
    .fcntl = NULL, /* O_NONBLOCK is kept by libnom's table */
    .flags = NOM_FILE_PREEMPT_OFF,
};
