/*
 * sock_api.c: the POSIX socket calls (libnom's <sys/socket.h> declares them): socket, bind,
 * listen, accept, accept4, connect, shutdown, send, recv, sendto, recvfrom, sendmsg, recvmsg.
 * Each runs the non-blocking operation under the stack lock and, for a blocking descriptor,
 * waits for readiness outside it (sock.h) and tries again.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <nom/fd.h>
#include <nom/sched.h>

#include "netloop.h"
#include "sock.h"

#ifndef MSG_MORE
#define MSG_MORE 0
#endif
#ifndef MSG_DONTWAIT
#define MSG_DONTWAIT 0
#endif
#ifndef MSG_WAITALL
#define MSG_WAITALL 0
#endif

/* One attempt of a data call; -EAGAIN asks for another after readiness. */
typedef ssize_t (*sock_attempt_fn)(struct nomsock *s, void *ctx);

static int sock_nonblocking(int fd, int flags)
{
    return (flags & MSG_DONTWAIT) || nom_fd_nonblocking(fd) == 1;
}

static ssize_t sock_attempt(struct nomsock *s, sock_attempt_fn fn, void *ctx)
{
    ssize_t r;
    nom_preempt_disable();
    r = fn(s, ctx);
    netloop_commit(); /* the stack's batch (paper 3.6) ends with the call */
    nom_preempt_enable();
    return r;
}

/* Runs fn until it does not say -EAGAIN, waiting for `events` in between unless nonblocking. */
static ssize_t sock_run(int fd, struct nomsock *s, int flags, short events, uint64_t timeout_us,
                        sock_attempt_fn fn, void *ctx)
{
    int nonblock = sock_nonblocking(fd, flags);
    for (;;) {
        ssize_t r = sock_attempt(s, fn, ctx);
        if (r != -EAGAIN || nonblock)
            return r;
        r = nomsock_block(fd, events, timeout_us);
        if (r < 0)
            return r;
    }
}

int socket(int domain, int type, int protocol)
{
    int flags = 0, base = type, r;
    struct nomsock *s;
#ifdef SOCK_NONBLOCK
    flags = type & SOCK_NONBLOCK;
    base &= ~SOCK_NONBLOCK;
#endif
#ifdef SOCK_CLOEXEC
    base &= ~SOCK_CLOEXEC; /* nom has no exec */
#endif
    if (domain != AF_INET)
        return (int)nomsock_ret(-EAFNOSUPPORT);
    if (!((base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) ||
          (base == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP))))
        return (int)nomsock_ret(-EPROTONOSUPPORT);
    s = nomsock_alloc(base);
    if (s == NULL)
        return (int)nomsock_ret(-ENOMEM);
    nom_preempt_disable();
    net_stack_init();
    r = base == SOCK_STREAM ? tcpsock_open(s) : udpsock_open(s);
    nom_preempt_enable();
    if (r < 0) {
        nomsock_free(s);
        return (int)nomsock_ret(r);
    }
    return nomsock_install(s, flags);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct nomsock *s = nomsock_get(fd);
    ip_addr_t ip;
    u16_t port;
    int r;
    if (s == NULL)
        return -1;
    r = nomsock_inet_addr(addr, len, &ip, &port);
    if (r < 0)
        return (int)nomsock_ret(r);
    nom_preempt_disable();
    r = s->type == SOCK_STREAM ? tcpsock_bind_nb(s, &ip, port) : udpsock_bind_nb(s, &ip, port);
    nom_preempt_enable();
    return (int)nomsock_ret(r);
}

int listen(int fd, int backlog)
{
    struct nomsock *s = nomsock_get(fd);
    int r;
    if (s == NULL)
        return -1;
    if (s->type != SOCK_STREAM)
        return (int)nomsock_ret(-EOPNOTSUPP);
    nom_preempt_disable();
    r = tcpsock_listen_nb(s, backlog);
    nom_preempt_enable();
    return (int)nomsock_ret(r);
}

static ssize_t attempt_accept(struct nomsock *s, void *ctx)
{
    return tcpsock_accept_nb(s, ctx);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    struct nomsock *s = nomsock_get(fd), *c = NULL;
    ssize_t r;
    int nonblock = 0;
    if (s == NULL)
        return -1;
    if (s->type != SOCK_STREAM)
        return (int)nomsock_ret(-EOPNOTSUPP);
#ifdef SOCK_NONBLOCK
    nonblock = flags & SOCK_NONBLOCK;
#else
    (void)flags;
#endif
    r = sock_run(fd, s, 0, POLLIN, s->rcvtimeo_us, attempt_accept, &c);
    if (r < 0)
        return (int)nomsock_ret(r);
    if (addr != NULL && len != NULL)
        nomsock_to_sockaddr(&c->peer_ip, c->peer_port, addr, len);
    return nomsock_install(c, nonblock);
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    return accept4(fd, addr, len, 0);
}

/* A blocking connect waits for the handshake; the answer is the state it leaves. */
static int connect_result(struct nomsock *s)
{
    int r;
    nom_preempt_disable();
    if (s->state == NS_CONNECTED) {
        r = 0;
    } else if (s->state == NS_CONNECTING) {
        r = -EINPROGRESS;
    } else {
        r = -(s->error ? s->error : ECONNABORTED);
        s->error = 0;
    }
    nom_preempt_enable();
    return r;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct nomsock *s = nomsock_get(fd);
    ip_addr_t ip;
    u16_t port;
    int unspec, r;
    if (s == NULL)
        return -1;
    r = nomsock_from_sockaddr(addr, len, &ip, &port, &unspec);
    if (r < 0 || (unspec && s->type == SOCK_STREAM))
        return (int)nomsock_ret(r < 0 ? r : -EAFNOSUPPORT);
    nom_preempt_disable();
    if (s->type == SOCK_DGRAM)
        r = udpsock_connect_nb(s, unspec ? NULL : &ip, port);
    else
        r = tcpsock_connect_nb(s, &ip, port);
    netloop_commit(); /* the SYN */
    nom_preempt_enable();
    if (r != -EINPROGRESS || sock_nonblocking(fd, 0))
        return (int)nomsock_ret(r);
    while ((r = connect_result(s)) == -EINPROGRESS) {
        r = nomsock_block(fd, POLLOUT, s->sndtimeo_us);
        if (r < 0)
            return (int)nomsock_ret(r == -EAGAIN ? -EINPROGRESS : r);
    }
    return (int)nomsock_ret(r);
}

int shutdown(int fd, int how)
{
    struct nomsock *s = nomsock_get(fd);
    int r;
    if (s == NULL)
        return -1;
    if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
        return (int)nomsock_ret(-EINVAL);
    if (s->type != SOCK_STREAM)
        return (int)nomsock_ret(-ENOTCONN);
    nom_preempt_disable();
    r = tcpsock_shutdown_nb(s, how);
    netloop_commit(); /* the FIN */
    nom_preempt_enable();
    return (int)nomsock_ret(r);
}

/* ---- data ---- */

struct send_ctx {
    const struct iovec *iov;
    int iovcnt;
    int more;                /* MSG_MORE */
    const ip_addr_t *ip;     /* UDP destination, NULL: the connected peer */
    u16_t port;
    size_t done;             /* TCP: bytes queued so far over all attempts */
};

/* A vector of several pieces that together fit one segment is gathered into one buffer and
 * queued with one tcp_write: memcached answers a GET with three pieces (its VALUE line, the
 * item, END), and each tcp_write costs more than copying a segment's worth (issue 16). */
#define SEND_GATHER_MAX TCP_MSS

/* Queues a short vector whole, as one piece, at its first attempt, and counts what it queued
 * in c->done. Returns tcpsock_send_nb's answer, or 0 if the vector is not one to gather. */
static ssize_t gather_send(struct nomsock *s, struct send_ctx *c)
{
    char buf[SEND_GATHER_MAX];
    size_t total = 0;
    ssize_t r;
    if (c->iovcnt < 2 || c->done != 0)
        return 0;
    for (int i = 0; i < c->iovcnt; i++) {
        if (c->iov[i].iov_len > SEND_GATHER_MAX - total)
            return 0;
        memcpy(buf + total, c->iov[i].iov_base, c->iov[i].iov_len);
        total += c->iov[i].iov_len;
    }
    r = tcpsock_send_nb(s, buf, total, c->more);
    if (r > 0)
        c->done = (size_t)r;
    return r;
}

/* TCP: queue as much of the remaining bytes as fits; a blocking call returns only when all
 * are queued, as POSIX says for stream sockets. */
static ssize_t attempt_send(struct nomsock *s, void *arg)
{
    struct send_ctx *c = arg;
    size_t skip, total = 0;
    ssize_t r = 0;
    if (s->type == SOCK_DGRAM)
        return udpsock_send_nb(s, c->iov, c->iovcnt, c->ip, c->port);
    r = gather_send(s, c); /* then the loop below queues what it left, piece by piece */
    if (r < 0 && r != -EAGAIN)
        return r;
    r = 0;
    skip = c->done;
    for (int i = 0; i < c->iovcnt; i++) {
        const struct iovec *v = &c->iov[i];
        total += v->iov_len;
        if (skip >= v->iov_len) {
            skip -= v->iov_len;
            continue;
        }
        r = tcpsock_send_nb(s, (const char *)v->iov_base + skip, v->iov_len - skip,
                            c->more || i + 1 < c->iovcnt);
        if (r < 0)
            break;
        c->done += (size_t)r;
        if ((size_t)r < v->iov_len - skip) {
            r = -EAGAIN;
            break;
        }
        skip = 0;
    }
    if (r >= 0)
        return (ssize_t)total;
    return (r == -EAGAIN || c->done == 0) ? r : (ssize_t)c->done;
}

static ssize_t sock_send(int fd, const struct iovec *iov, int iovcnt, int flags,
                         const ip_addr_t *ip, u16_t port)
{
    struct nomsock *s = nomsock_get(fd);
    struct send_ctx c = { iov, iovcnt, (flags & MSG_MORE) != 0, ip, port, 0 };
    ssize_t r;
    if (s == NULL)
        return -1;
    r = sock_run(fd, s, flags, POLLOUT, s->sndtimeo_us, attempt_send, &c);
    if (r == -EAGAIN && c.done > 0)
        r = (ssize_t)c.done; /* non-blocking or timed out after a partial write */
    return nomsock_ret(r);
}

struct recv_ctx {
    const struct iovec *iov;
    int iovcnt;
    int peek, waitall;
    size_t done, full;
    ip_addr_t from;
    u16_t port;
};

static ssize_t attempt_recv(struct nomsock *s, void *arg)
{
    struct recv_ctx *c = arg;
    size_t skip = c->done;
    if (s->type == SOCK_DGRAM)
        return udpsock_recv_nb(s, c->iov, c->iovcnt, c->peek, &c->full, &c->from, &c->port);
    for (int i = 0; i < c->iovcnt; i++) {
        const struct iovec *v = &c->iov[i];
        ssize_t r;
        if (skip >= v->iov_len) {
            skip -= v->iov_len;
            continue;
        }
        r = tcpsock_recv_nb(s, (char *)v->iov_base + skip, v->iov_len - skip, c->peek);
        if (r <= 0) {
            if (c->done > 0 && !(c->waitall && r == -EAGAIN))
                return (ssize_t)c->done;
            return r == 0 ? (ssize_t)c->done : r;
        }
        c->done += (size_t)r;
        if ((size_t)r < v->iov_len - skip)
            return (c->waitall && !c->peek) ? -EAGAIN : (ssize_t)c->done;
        skip = 0;
    }
    return (ssize_t)c->done;
}

static ssize_t sock_recv(int fd, struct recv_ctx *c, int flags)
{
    struct nomsock *s = nomsock_get(fd);
    ssize_t r;
    if (s == NULL)
        return -1;
    c->peek = (flags & MSG_PEEK) != 0;
    c->waitall = (flags & MSG_WAITALL) != 0 && s->type == SOCK_STREAM;
    r = sock_run(fd, s, flags, POLLIN, s->rcvtimeo_us, attempt_recv, c);
    if (r == -EAGAIN && c->done > 0)
        r = (ssize_t)c->done;
    return nomsock_ret(r);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    struct iovec iov = { (void *)buf, n };
    return sock_send(fd, &iov, 1, flags, NULL, 0);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
               socklen_t len)
{
    struct iovec iov = { (void *)buf, n };
    struct nomsock *s;
    ip_addr_t ip;
    u16_t port;
    int r;
    if (to == NULL)
        return send(fd, buf, n, flags);
    s = nomsock_get(fd);
    if (s == NULL)
        return -1;
    if (s->type == SOCK_STREAM)
        return s->state == NS_CONNECTED ? send(fd, buf, n, flags) : nomsock_ret(-EISCONN);
    r = nomsock_inet_addr(to, len, &ip, &port);
    if (r < 0)
        return nomsock_ret(r);
    return sock_send(fd, &iov, 1, flags, &ip, port);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ip_addr_t ip;
    u16_t port = 0;
    int r;
    if (msg->msg_name != NULL) {
        struct nomsock *s = nomsock_get(fd);
        if (s == NULL)
            return -1;
        r = nomsock_inet_addr(msg->msg_name, msg->msg_namelen, &ip, &port);
        if (r < 0)
            return nomsock_ret(r);
        if (s->type == SOCK_STREAM)
            return nomsock_ret(-EISCONN);
    }
    return sock_send(fd, msg->msg_iov, (int)msg->msg_iovlen, flags,
                     msg->msg_name != NULL ? &ip : NULL, port);
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    struct iovec iov = { buf, n };
    struct recv_ctx c = { .iov = &iov, .iovcnt = 1 };
    return sock_recv(fd, &c, flags);
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len)
{
    struct iovec iov = { buf, n };
    struct recv_ctx c = { .iov = &iov, .iovcnt = 1 };
    ssize_t r = sock_recv(fd, &c, flags);
    if (r >= 0 && from != NULL && len != NULL) {
        struct nomsock *s = nomsock_get(fd);
        if (s->type == SOCK_STREAM)
            nomsock_to_sockaddr(&s->peer_ip, s->peer_port, from, len);
        else
            nomsock_to_sockaddr(&c.from, c.port, from, len);
    }
    return r;
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    struct recv_ctx c = { .iov = msg->msg_iov, .iovcnt = (int)msg->msg_iovlen };
    ssize_t r = sock_recv(fd, &c, flags);
    if (r < 0)
        return r;
    msg->msg_flags = 0;
    msg->msg_controllen = 0;
    if (c.full > (size_t)r)
        msg->msg_flags |= MSG_TRUNC;
    if (msg->msg_name != NULL) {
        struct nomsock *s = nomsock_get(fd);
        if (s->type == SOCK_DGRAM)
            nomsock_to_sockaddr(&c.from, c.port, msg->msg_name, &msg->msg_namelen);
        else
            msg->msg_namelen = 0;
    }
    return r;
}
