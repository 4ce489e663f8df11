/*
 * sock_opt.c: setsockopt/getsockopt. Options with a meaning for lwIP go to the pcb; options
 * that only size buffers are kept and reported back (lwIP's windows and queues are fixed at
 * build time, lwipopts.h) or bound the UDP receive queue; options with no meaning here are
 * accepted and ignored, so ported programs (memcached, libevent, NetPIPE) run unchanged.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
/* <netinet/tcp.h> may define TCP_MSS (BSD's 512); lwipopts.h defines the one lwIP uses. */
#undef TCP_MSS

#include <nom/sched.h>

#include "sock.h"

static int opt_int(const void *val, socklen_t len, int *out)
{
    if (val == NULL || len < (socklen_t)sizeof(int))
        return -EINVAL;
    memcpy(out, val, sizeof(int));
    return 0;
}

static int opt_timeout(const void *val, socklen_t len, uint64_t *us)
{
    struct timeval tv;
    if (val == NULL || len < (socklen_t)sizeof tv)
        return -EINVAL;
    memcpy(&tv, val, sizeof tv);
    if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
        return -EDOM;
    *us = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
    return 0;
}

/* The pcb-wide ip_pcb options (both pcb kinds start with IP_PCB). */
static void set_pcb_option(struct nomsock *s, u8_t opt, int on)
{
    struct ip_pcb *pcb = (struct ip_pcb *)s->pcb.udp;
    if (pcb == NULL)
        return;
    if (on)
        ip_set_option(pcb, opt);
    else
        ip_reset_option(pcb, opt);
}

static int set_socket_level(struct nomsock *s, int name, const void *val, socklen_t len)
{
    int v = 0, r;
    if (name == SO_RCVTIMEO)
        return opt_timeout(val, len, &s->rcvtimeo_us);
    if (name == SO_SNDTIMEO)
        return opt_timeout(val, len, &s->sndtimeo_us);
    if (name == SO_LINGER) {
        struct linger l;
        if (val == NULL || len < (socklen_t)sizeof l)
            return -EINVAL;
        memcpy(&l, val, sizeof l);
        s->linger_abort = l.l_onoff && l.l_linger == 0;
        s->linger_s = l.l_onoff ? l.l_linger : 0;
        return 0;
    }
    r = opt_int(val, len, &v);
    if (r < 0)
        return r;
    switch (name) {
    case SO_REUSEADDR:
        s->reuseaddr = v != 0;
        set_pcb_option(s, SOF_REUSEADDR, v);
        return 0;
    case SO_KEEPALIVE:
        s->keepalive = v != 0;
        if (s->type == SOCK_STREAM)
            tcpsock_apply_options(s);
        return 0;
    case SO_BROADCAST:
        set_pcb_option(s, SOF_BROADCAST, v);
        return 0;
    case SO_SNDBUF:
        s->sndbuf = v;
        return 0;
    case SO_RCVBUF:
        s->rcvbuf = v < 2048 ? 2048 : v;
        return 0;
#ifdef SO_REUSEPORT
    case SO_REUSEPORT:
#endif
    case SO_DONTROUTE:
    case SO_OOBINLINE:
    case SO_RCVLOWAT:
    case SO_SNDLOWAT:
        return 0; /* accepted, no meaning on a private stack */
    default:
        return -ENOPROTOOPT;
    }
}

static int set_tcp_level(struct nomsock *s, int name, const void *val, socklen_t len)
{
    int v, r = opt_int(val, len, &v);
    struct tcp_pcb *pcb = s->state == NS_LISTEN ? NULL : s->pcb.tcp;
    if (r < 0)
        return r;
    if (s->type != SOCK_STREAM)
        return -ENOPROTOOPT;
    switch (name) {
    case TCP_NODELAY:
        s->nodelay = v != 0;
        tcpsock_apply_options(s);
        return 0;
#ifdef TCP_KEEPIDLE
    case TCP_KEEPIDLE:
        if (pcb != NULL)
            pcb->keep_idle = (u32_t)v * 1000u;
        return 0;
#endif
#ifdef TCP_KEEPINTVL
    case TCP_KEEPINTVL:
        if (pcb != NULL)
            pcb->keep_intvl = (u32_t)v * 1000u;
        return 0;
#endif
#ifdef TCP_KEEPCNT
    case TCP_KEEPCNT:
        if (pcb != NULL)
            pcb->keep_cnt = (u32_t)v;
        return 0;
#endif
#ifdef TCP_MAXSEG
    case TCP_MAXSEG:
#endif
        return 0; /* the MSS is the build's (lwipopts.h) */
    default:
        return -ENOPROTOOPT;
    }
}

static int set_ip_level(struct nomsock *s, int name, const void *val, socklen_t len)
{
    int v, r = opt_int(val, len, &v);
    struct ip_pcb *pcb = (struct ip_pcb *)s->pcb.udp;
    if (r < 0)
        return r;
    switch (name) {
    case IP_TOS:
        if (pcb != NULL)
            pcb->tos = (u8_t)v;
        return 0;
    case IP_TTL:
        if (pcb != NULL)
            pcb->ttl = (u8_t)v;
        return 0;
    default:
        return -ENOPROTOOPT;
    }
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    struct nomsock *s = nomsock_get(fd);
    int r;
    if (s == NULL)
        return -1;
    nom_preempt_disable();
    if (level == SOL_SOCKET)
        r = set_socket_level(s, name, val, len);
    else if (level == IPPROTO_TCP)
        r = set_tcp_level(s, name, val, len);
    else if (level == IPPROTO_IP)
        r = set_ip_level(s, name, val, len);
    else
        r = -ENOPROTOOPT;
    nom_preempt_enable();
    return (int)nomsock_ret(r);
}

/* ---- getsockopt ---- */

static int put_opt(void *val, socklen_t *len, const void *src, socklen_t n)
{
    if (val == NULL || len == NULL)
        return -EFAULT;
    if (*len < n)
        n = *len;
    memcpy(val, src, n);
    *len = n;
    return 0;
}

static int get_socket_level(struct nomsock *s, int name, int *v, struct timeval *tv,
                            struct linger *l)
{
    switch (name) {
    case SO_ERROR:     *v = s->error; s->error = 0; return 0;
    case SO_TYPE:      *v = s->type; return 0;
    case SO_ACCEPTCONN: *v = s->state == NS_LISTEN; return 0;
    case SO_REUSEADDR: *v = s->reuseaddr; return 0;
    case SO_KEEPALIVE: *v = s->keepalive; return 0;
    case SO_SNDBUF:    *v = s->sndbuf; return 0;
    case SO_RCVBUF:    *v = s->rcvbuf; return 0;
    case SO_LINGER:
        l->l_onoff = s->linger_abort || s->linger_s > 0;
        l->l_linger = s->linger_s;
        return 1;
    case SO_RCVTIMEO:
    case SO_SNDTIMEO: {
        uint64_t us = name == SO_RCVTIMEO ? s->rcvtimeo_us : s->sndtimeo_us;
        tv->tv_sec = (time_t)(us / 1000000u);
        tv->tv_usec = (suseconds_t)(us % 1000000u);
        return 2;
    }
    default:
        return -ENOPROTOOPT;
    }
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    struct nomsock *s = nomsock_get(fd);
    struct timeval tv;
    struct linger l;
    int v = 0, r;
    if (s == NULL)
        return -1;
    nom_preempt_disable();
    if (level == SOL_SOCKET)
        r = get_socket_level(s, name, &v, &tv, &l);
    else if (level == IPPROTO_TCP && s->type == SOCK_STREAM && name == TCP_NODELAY)
        r = (v = s->nodelay, 0);
    else
        r = -ENOPROTOOPT;
    nom_preempt_enable();
    if (r == 1)
        r = put_opt(val, len, &l, sizeof l);
    else if (r == 2)
        r = put_opt(val, len, &tv, sizeof tv);
    else if (r == 0)
        r = put_opt(val, len, &v, sizeof v);
    return (int)nomsock_ret(r);
}
