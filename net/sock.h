/*
 * sock.h: the inside of nom's socket layer (not a public header; applications use the POSIX
 * names from libnom's <sys/socket.h>, implemented in net/sock_*.c).
 *
 * A socket is one lwIP pcb (raw/tcp callback API, NO_SYS=1, see lwipopts.h) plus the state a
 * POSIX socket needs on top of it: received bytes not yet read, an accept queue, a pending
 * error. It is a file kind in libnom's one fd table (nom/fd.h), so read/write/close/poll/
 * select/fcntl on a socket go through `nomsock_ops`, next to pipes.
 *
 * Locking: everything that touches lwIP or a socket's state runs between nom_preempt_disable()
 * and nom_preempt_enable() (nom/sched.h: on one core that is the stack's lock). lwIP's
 * callbacks run inside netloop_run() (libnom's idle hook and timer, scheduler context), which
 * holds it too. Functions named *_nb below expect the caller to hold it and never block; they
 * return >= 0 or a negated errno, -EAGAIN meaning "would block". Blocking is done outside the
 * lock, by the POSIX entry points, with nom_fd_wait() on the socket's readiness.
 *
 * Readiness changes (data, space, a connection, an error) are reported with nom_fd_event(s)
 * through nomsock_changed(): only a bit gained, which is all epoll and poll need (nom/fd.h).
 */
#ifndef NOM_NET_SOCK_H
#define NOM_NET_SOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/uio.h>

#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/udp.h"

enum nomsock_state {
    NS_OPEN,        /* fresh (TCP: pcb created, maybe bound) */
    NS_LISTEN,      /* TCP listener: pcb.listen */
    NS_CONNECTING,  /* TCP: SYN sent */
    NS_CONNECTED,   /* TCP: established (or closing from the peer's side) */
    NS_DEAD,        /* TCP: lwIP freed the pcb (reset, abort, timeout); `error` says why */
};

/* One received datagram waiting in a UDP socket. */
struct nomsock_dgram {
    struct pbuf *p;
    ip_addr_t from;
    u16_t port;
};

#define NOMSOCK_DGRAM_QUEUE 256 /* datagrams a UDP socket holds before dropping */
/* The most established connections a listener holds for accept() (Linux's somaxconn): a
 * larger listen() backlog is cut to it. Once a listener holds its backlog, new SYNs for it are
 * dropped (tcp_hooks.c) and their clients retransmit, as on Linux; lwIP's own backlog is off
 * (lwipopts.h says why). */
#define NOMSOCK_ACCEPT_QUEUE 4096
/* Received segments up to this size are copied out of the receive pool into the heap: a
 * connection holding a short request must not pin a whole 1.5 KiB pool buffer, or a few
 * thousand waiting connections exhaust the pool and every connection stalls. */
#define NOMSOCK_RX_COPY_MAX 512

struct nomsock {
    int type;                   /* SOCK_STREAM or SOCK_DGRAM */
    enum nomsock_state state;
    union {
        struct tcp_pcb *tcp;
        struct tcp_pcb_listen *listen;
        struct udp_pcb *udp;
    } pcb;
    int error;                  /* pending error for SO_ERROR / the next call, 0 if none */
    unsigned rd_eof : 1;        /* TCP: the peer sent FIN */
    unsigned rd_shut : 1;       /* shutdown(SHUT_RD) */
    unsigned wr_shut : 1;       /* shutdown(SHUT_WR) */
    unsigned nodelay : 1;       /* TCP_NODELAY (kept here too: accepted sockets inherit it) */
    unsigned linger_abort : 1;  /* SO_LINGER on with 0 s: close() resets */
    unsigned keepalive : 1;
    unsigned reuseaddr : 1;
    unsigned accepted : 1;      /* TCP: came from accept(): its requests are timed */
    unsigned reporting : 1;     /* inside nomsock_changed's nom_fd_event: notified is current */
    short notified;             /* readiness last reported through nom_fd_event() */
    /* TCP receive queue: pbufs (one segment each, next-linked) not yet read. */
    struct pbuf *rx_head, *rx_tail;
    u16_t rx_off;               /* bytes of rx_head already read */
    size_t rx_bytes;
    u32_t rx_unopened;          /* read, not yet given back to the window (sock_tcp.c) */
    /* TCP listener: established connections waiting for accept(), oldest first. */
    struct nomsock *accept_head, *accept_tail, *accept_next;
    unsigned accept_len;
    unsigned accept_max;        /* listen()'s backlog, 1..NOMSOCK_ACCEPT_QUEUE */
    /* UDP receive ring. */
    struct nomsock_dgram *dq;
    unsigned dq_head, dq_len;
    size_t dq_bytes;
    /* Options kept for getsockopt and for blocking calls. */
    int sndbuf, rcvbuf;
    int linger_s;
    uint64_t rcvtimeo_us, sndtimeo_us; /* 0: block forever */
    ip_addr_t peer_ip;          /* TCP: remembered at connect/accept (the pcb may die) */
    u16_t peer_port;
    /* TCP, accepted: the nom_tsc() at which the request being served arrived (its first
     * segment while none was open), 0: none open (sock_tcp.c, "Residence"). */
    uint64_t request_tsc;
    /* TCP, accepted: bytes received since the application last sent on it, saturating
     * (adapt_stack.c counts each receive window's worth as a request in flight: a client
     * that streams has that many out). */
    uint32_t rx_unanswered;
};

extern const struct nom_file_ops nomsock_ops;

/* ---- sock.c: lifecycle, readiness, blocking ---- */
struct nomsock *nomsock_alloc(int type);
void nomsock_free(struct nomsock *s);
/* The socket behind fd, or NULL with errno set (EBADF, ENOTSOCK). */
struct nomsock *nomsock_get(int fd);
/* Installs s in the fd table; the fd, or -1 with errno (EMFILE). s is freed on failure. */
int nomsock_install(struct nomsock *s, int nonblock);
short nomsock_readiness(struct nomsock *s);
void nomsock_changed(struct nomsock *s);
/* Waits (lock NOT held) until fd shows one of events or the timeout; 0, or -EAGAIN on timeout
 * (SO_RCVTIMEO/SO_SNDTIMEO semantics: the call then fails with EAGAIN). */
int nomsock_block(int fd, short events, uint64_t timeout_us);
/* Sets errno from a negated errno and returns -1, or passes r >= 0 through. */
long nomsock_ret(long r);
int nomsock_err_from_lwip(err_t err);

/* ---- sock_tcp.c ---- */
int tcpsock_open(struct nomsock *s);
int tcpsock_bind_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port);
int tcpsock_listen_nb(struct nomsock *s, int backlog);
int tcpsock_accept_nb(struct nomsock *s, struct nomsock **child);
int tcpsock_connect_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port);
ssize_t tcpsock_send_nb(struct nomsock *s, const void *buf, size_t n, int more);
ssize_t tcpsock_recv_nb(struct nomsock *s, void *buf, size_t n, int peek);
int tcpsock_shutdown_nb(struct nomsock *s, int how);
void tcpsock_close_nb(struct nomsock *s);
short tcpsock_readiness(struct nomsock *s);
void tcpsock_apply_options(struct nomsock *s);
/* Residence of the requests served so far on accepted connections: from a request's first
 * segment reaching the socket to the application handing over its whole answer (sock_tcp.c
 * says what this leaves out). Monotonic sums; the caller holds the stack lock. */
struct nomsock_residence {
    uint64_t requests;
    double us_sum, us_sq_sum;
};
void tcpsock_residence(struct nomsock_residence *out);

/* ---- sock_udp.c ---- */
int udpsock_open(struct nomsock *s);
int udpsock_bind_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port);
int udpsock_connect_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port);
/* Sends the bytes of iov[0..iovcnt) as one datagram, to ip:port or (ip NULL) the peer. */
ssize_t udpsock_send_nb(struct nomsock *s, const struct iovec *iov, int iovcnt,
                        const ip_addr_t *ip, u16_t port);
/* Copies the next datagram into iov; *full gets its whole length; from/port if non-NULL. */
ssize_t udpsock_recv_nb(struct nomsock *s, const struct iovec *iov, int iovcnt, int peek,
                        size_t *full, ip_addr_t *from, u16_t *port);
void udpsock_close_nb(struct nomsock *s);
short udpsock_readiness(struct nomsock *s);

/* ---- addr.c ---- */
/* sockaddr_in -> lwIP address; -EAFNOSUPPORT, -EINVAL (short). AF_UNSPEC gives *unspec = 1. */
int nomsock_from_sockaddr(const struct sockaddr *sa, socklen_t len, ip_addr_t *ip, u16_t *port,
                          int *unspec);
/* The same where an address is required: AF_UNSPEC is -EAFNOSUPPORT. */
int nomsock_inet_addr(const struct sockaddr *sa, socklen_t len, ip_addr_t *ip, u16_t *port);
/* lwIP address -> sockaddr_in, truncated to *len as POSIX says; *len = full size. */
void nomsock_to_sockaddr(const ip_addr_t *ip, u16_t port, struct sockaddr *sa, socklen_t *len);

/* Whether listener l holds its backlog of connections waiting for accept(): its new SYNs are
 * then dropped. Inline for the IPv4 input hook (tcp_hooks.c), which is part of liblwip.a and
 * must not call into libnomnet.a. */
static inline int nomsock_accept_full(const struct nomsock *l)
{
    return l->state == NS_LISTEN && l->accept_len >= l->accept_max;
}

#endif /* NOM_NET_SOCK_H */
