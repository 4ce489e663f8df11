/* addr.c: sockaddr_in <-> lwIP addresses, getsockname and getpeername (IPv4 only: lwipopts.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <nom/sched.h>

#include "sock.h"

int nomsock_from_sockaddr(const struct sockaddr *sa, socklen_t len, ip_addr_t *ip, u16_t *port,
                          int *unspec)
{
    struct sockaddr_in sin;
    *unspec = 0;
    if (sa == NULL || len < (socklen_t)sizeof(sa_family_t))
        return -EINVAL;
    if (sa->sa_family == AF_UNSPEC) {
        *unspec = 1;
        return 0;
    }
    if (sa->sa_family != AF_INET)
        return -EAFNOSUPPORT;
    if (len < (socklen_t)sizeof sin)
        return -EINVAL;
    memcpy(&sin, sa, sizeof sin);
    ip_addr_set_ip4_u32_val(*ip, sin.sin_addr.s_addr); /* both in network byte order */
    *port = ntohs(sin.sin_port);
    return 0;
}

int nomsock_inet_addr(const struct sockaddr *sa, socklen_t len, ip_addr_t *ip, u16_t *port)
{
    int unspec, r = nomsock_from_sockaddr(sa, len, ip, port, &unspec);
    return r == 0 && unspec ? -EAFNOSUPPORT : r;
}

void nomsock_to_sockaddr(const ip_addr_t *ip, u16_t port, struct sockaddr *sa, socklen_t *len)
{
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = ip4_addr_get_u32(ip_2_ip4(ip));
    memcpy(sa, &sin, *len < (socklen_t)sizeof sin ? *len : sizeof sin);
    *len = sizeof sin;
}

/* The local end: the pcb knows it (a listen pcb shares the prefix of a tcp_pcb). */
static void local_end(struct nomsock *s, ip_addr_t *ip, u16_t *port)
{
    ip_addr_set_zero_ip4(ip);
    *port = 0;
    if (s->type == SOCK_DGRAM && s->pcb.udp != NULL) {
        ip_addr_copy(*ip, s->pcb.udp->local_ip);
        *port = s->pcb.udp->local_port;
    } else if (s->type == SOCK_STREAM && s->state == NS_LISTEN) {
        ip_addr_copy(*ip, s->pcb.listen->local_ip);
        *port = s->pcb.listen->local_port;
    } else if (s->type == SOCK_STREAM && s->pcb.tcp != NULL) {
        ip_addr_copy(*ip, s->pcb.tcp->local_ip);
        *port = s->pcb.tcp->local_port;
    }
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct nomsock *s = nomsock_get(fd);
    ip_addr_t ip;
    u16_t port;
    if (s == NULL)
        return -1;
    if (addr == NULL || len == NULL)
        return (int)nomsock_ret(-EFAULT);
    nom_preempt_disable();
    local_end(s, &ip, &port);
    nom_preempt_enable();
    nomsock_to_sockaddr(&ip, port, addr, len);
    return 0;
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct nomsock *s = nomsock_get(fd);
    ip_addr_t ip;
    u16_t port;
    int r = 0;
    if (s == NULL)
        return -1;
    if (addr == NULL || len == NULL)
        return (int)nomsock_ret(-EFAULT);
    nom_preempt_disable();
    if (s->type == SOCK_STREAM && (s->state == NS_CONNECTED || s->state == NS_CONNECTING)) {
        ip_addr_copy(ip, s->peer_ip);
        port = s->peer_port;
        r = s->state == NS_CONNECTED ? 0 : -ENOTCONN;
    } else if (s->type == SOCK_DGRAM && (s->pcb.udp->flags & UDP_FLAGS_CONNECTED)) {
        ip_addr_copy(ip, s->pcb.udp->remote_ip);
        port = s->pcb.udp->remote_port;
    } else {
        r = -ENOTCONN;
    }
    nom_preempt_enable();
    if (r == 0)
        nomsock_to_sockaddr(&ip, port, addr, len);
    return (int)nomsock_ret(r);
}
