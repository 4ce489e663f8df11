/*
 * sock_udp.c: UDP sockets on lwIP's raw udp API (sock.h). Received datagrams wait in a ring
 * of (pbuf, source) entries, bounded by SO_RCVBUF bytes and NOMSOCK_DGRAM_QUEUE entries;
 * beyond that they are dropped, as a full socket buffer drops them on any system.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rx_budget.h"
#include "sock.h"

/* Largest UDP payload over IPv4 (65535 - 20 - 8). */
#define UDP_PAYLOAD_MAX 65507u

static void udpsock_on_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p,
                            const ip_addr_t *addr, u16_t port)
{
    struct nomsock *s = arg;
    struct nomsock_dgram *d;
    (void)pcb;
    if (s->dq_len == NOMSOCK_DGRAM_QUEUE || s->dq_bytes + p->tot_len > (size_t)s->rcvbuf) {
        pbuf_free(p);
        return;
    }
    d = &s->dq[(s->dq_head + s->dq_len) % NOMSOCK_DGRAM_QUEUE];
    d->p = p = nomnet_rx_unpool(p, false); /* queued datagrams leave the pool under pressure */
    ip_addr_copy(d->from, *addr);
    d->port = port;
    s->dq_len++;
    s->dq_bytes += p->tot_len;
    nomsock_changed(s);
}

int udpsock_open(struct nomsock *s)
{
    s->dq = calloc(NOMSOCK_DGRAM_QUEUE, sizeof *s->dq);
    if (s->dq == NULL)
        return -ENOMEM;
    s->pcb.udp = udp_new_ip_type(IPADDR_TYPE_V4);
    if (s->pcb.udp == NULL)
        return -ENOBUFS;
    s->rcvbuf = 256 * 1024;
    udp_recv(s->pcb.udp, udpsock_on_recv, s);
    return 0;
}

int udpsock_bind_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port)
{
    if (s->pcb.udp->local_port != 0)
        return -EINVAL;
    return -nomsock_err_from_lwip(udp_bind(s->pcb.udp, ip, port));
}

int udpsock_connect_nb(struct nomsock *s, const ip_addr_t *ip, u16_t port)
{
    if (ip == NULL) { /* AF_UNSPEC: dissolve the association */
        udp_disconnect(s->pcb.udp);
        return 0;
    }
    return -nomsock_err_from_lwip(udp_connect(s->pcb.udp, ip, port));
}

ssize_t udpsock_send_nb(struct nomsock *s, const struct iovec *iov, int iovcnt,
                        const ip_addr_t *ip, u16_t port)
{
    size_t len = 0, off = 0;
    struct pbuf *p;
    err_t err;

    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > UDP_PAYLOAD_MAX)
        return -EMSGSIZE;
    if (ip == NULL && !(s->pcb.udp->flags & UDP_FLAGS_CONNECTED))
        return -EDESTADDRREQ;
    p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
    if (p == NULL)
        return -ENOBUFS;
    for (int i = 0; i < iovcnt; i++) {
        pbuf_take_at(p, iov[i].iov_base, (u16_t)iov[i].iov_len, (u16_t)off);
        off += iov[i].iov_len;
    }
    err = ip ? udp_sendto(s->pcb.udp, p, ip, port) : udp_send(s->pcb.udp, p);
    pbuf_free(p);
    if (err == ERR_RTE)
        return -ENETUNREACH;
    return err == ERR_OK ? (ssize_t)len : -nomsock_err_from_lwip(err);
}

ssize_t udpsock_recv_nb(struct nomsock *s, const struct iovec *iov, int iovcnt, int peek,
                        size_t *full, ip_addr_t *from, u16_t *port)
{
    struct nomsock_dgram *d;
    size_t done = 0;
    if (s->dq_len == 0)
        return -EAGAIN;
    d = &s->dq[s->dq_head];
    for (int i = 0; i < iovcnt && done < d->p->tot_len; i++) {
        size_t room = d->p->tot_len - done; /* also keeps lengths within lwIP's u16_t */
        if (room > iov[i].iov_len)
            room = iov[i].iov_len;
        done += pbuf_copy_partial(d->p, iov[i].iov_base, (u16_t)room, (u16_t)done);
    }
    if (full != NULL)
        *full = d->p->tot_len;
    if (from != NULL)
        ip_addr_copy(*from, d->from);
    if (port != NULL)
        *port = d->port;
    if (!peek) {
        s->dq_bytes -= d->p->tot_len;
        pbuf_free(d->p);
        d->p = NULL;
        s->dq_head = (s->dq_head + 1) % NOMSOCK_DGRAM_QUEUE;
        s->dq_len--;
        s->notified = udpsock_readiness(s);
    }
    return (ssize_t)done;
}

void udpsock_close_nb(struct nomsock *s)
{
    while (s->dq_len > 0) {
        pbuf_free(s->dq[s->dq_head].p);
        s->dq_head = (s->dq_head + 1) % NOMSOCK_DGRAM_QUEUE;
        s->dq_len--;
    }
    if (s->pcb.udp != NULL)
        udp_remove(s->pcb.udp);
    s->pcb.udp = NULL;
}

short udpsock_readiness(struct nomsock *s)
{
    return (short)(POLLOUT | (s->dq_len > 0 ? POLLIN : 0));
}
