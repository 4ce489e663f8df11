/*
 * tcp_hooks.c: three TCP behaviours lwIP 2.1.3 leaves to its hooks (lwip_hooks.h).
 *
 * Initial sequence numbers (RFC 6528): ISN = M + F(4-tuple, secret), M a 4 us clock, F a keyed
 * hash. lwIP's default (a counter stepped by its timer ticks) is predictable, and, more to
 * the point here, it is what lets TIME-WAIT reuse below work for lwIP clients too: a new
 * incarnation of a connection starts above the old one's sequence numbers.
 *
 * TIME-WAIT reuse (RFC 1122 4.2.2.13, as Linux and BSD do): a server that closes first keeps
 * the connection in TIME-WAIT for 2 MSL; a client that closed passively may reuse its port at
 * once, and its SYN then meets the TIME-WAIT pcb. lwIP answers such a SYN with an ACK and
 * ignores the client's RST (RFC 1337), so the client cannot connect for two minutes (seen with
 * nhttpd's 10,000 malformed requests). Here a SYN whose sequence number lies above what the
 * old incarnation received ends that TIME-WAIT pcb first; lwIP then sees an ordinary SYN.
 * A SYN below it (the client sent more in the old connection than its ISN clock advanced
 * since: NetPIPE's streaming, whose reconnect loop goes through the ephemeral ports) still
 * gets lwIP's ACK; the client answers it with a RST carrying exactly our rcv_nxt, and that RST
 * ends the TIME-WAIT pcb, as Linux does by default (tcp_rfc1337 = 0, "TIME-WAIT
 * assassination"): the client's next SYN is then served. Without timestamps (RFC 6191) there
 * is no better test.
 *
 * The receive pool's budget (rx_budget.h) is enforced here too, first: past its limit a packet
 * that carries data is dropped before lwIP sees it.
 *
 * The hook runs before lwIP has checked anything (ip4_input calls it first), so a segment is
 * acted on only once it has passed the checks tcp_input would make: an IP header and total
 * length that fit the packet, and the TCP checksum where the netif asks for it to be checked.
 * A damaged or forged segment must not end a connection that lwIP itself would have kept.
 *
 * The listen backlog (lwipopts.h says why lwIP's own is off): a SYN for a listener whose
 * accept queue is full is dropped before lwIP sees it, as Linux drops it, and counted; the
 * client retransmits it, by which time the server has usually accepted. A SYN that belongs to
 * a connection already under way goes to that connection in lwIP, so only a new one is held
 * back.
 */
#include "lwip/def.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip4.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/priv/tcp_priv.h"
#include <nom/time.h>
#include <stdbool.h>

#include "arch/cc.h"
#include "lwip_hooks.h"
#include "rx_budget.h"
#include "sock.h"

static uint64_t syn_dropped;

/* A 64-bit mix (splitmix64's finalizer): enough to keep F unguessable without the secret,
 * which is all RFC 6528 asks of it here. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

u32_t nomnet_tcp_isn(const ip_addr_t *local_ip, u16_t local_port, const ip_addr_t *remote_ip,
                     u16_t remote_port)
{
    static uint64_t secret;
    uint64_t tuple;
    if (secret == 0)
        secret = ((uint64_t)LWIP_RAND() << 32 | LWIP_RAND()) | 1u;
    tuple = (uint64_t)ip4_addr_get_u32(ip_2_ip4(local_ip)) << 32 |
            ip4_addr_get_u32(ip_2_ip4(remote_ip));
    tuple = mix64(tuple ^ secret) ^ ((uint64_t)local_port << 16 | remote_port);
    return (u32_t)(nom_now_ns() / 4000u) + (u32_t)mix64(tuple + secret);
}

/* The pcb on list of this segment's connection (its 4-tuple), or NULL. */
static struct tcp_pcb *pcb_of(struct tcp_pcb *list, const struct ip_hdr *ip,
                              const struct tcp_hdr *tcp)
{
    for (struct tcp_pcb *pcb = list; pcb != NULL; pcb = pcb->next) {
        if (pcb->local_port == lwip_ntohs(tcp->dest) &&
            pcb->remote_port == lwip_ntohs(tcp->src) &&
            ip4_addr_get_u32(ip_2_ip4(&pcb->remote_ip)) == ip->src.addr &&
            ip4_addr_get_u32(ip_2_ip4(&pcb->local_ip)) == ip->dest.addr)
            return pcb;
    }
    return NULL;
}

/* Whether the segment ends its connection's TIME-WAIT: a SYN above what the old incarnation
 * received (RFC 1122 4.2.2.13), or a RST at exactly rcv_nxt (the answer to lwIP's ACK of a
 * SYN below it). */
static bool ends_timewait(const struct tcp_pcb *tw, const struct tcp_hdr *tcp)
{
    u32_t seqno = lwip_ntohl(tcp->seqno);
    u8_t flags = TCPH_FLAGS(tcp) & (TCP_SYN | TCP_ACK | TCP_RST);
    if (flags == TCP_SYN)
        return TCP_SEQ_GT(seqno, tw->rcv_nxt);
    return (flags & TCP_RST) && seqno == tw->rcv_nxt;
}

/* The listen pcb a SYN to ip->dest:tcp->dest would reach, or NULL (lwIP's own match). */
static struct tcp_pcb_listen *listener_of(const struct ip_hdr *ip, const struct tcp_hdr *tcp)
{
    for (struct tcp_pcb_listen *l = tcp_listen_pcbs.listen_pcbs; l != NULL; l = l->next) {
        if (l->local_port == lwip_ntohs(tcp->dest) &&
            (ip_addr_isany(&l->local_ip) ||
             ip4_addr_get_u32(ip_2_ip4(&l->local_ip)) == ip->dest.addr))
            return l;
    }
    return NULL;
}

/* Whether a SYN opening a new connection must wait: its listener holds its backlog. */
static bool over_backlog(const struct ip_hdr *ip, const struct tcp_hdr *tcp)
{
    struct tcp_pcb_listen *l = listener_of(ip, tcp);
    return l != NULL && l->callback_arg != NULL && nomsock_accept_full(l->callback_arg) &&
           pcb_of(tcp_active_pcbs, ip, tcp) == NULL; /* else a retransmission of a SYN in hand */
}

/* Whether the TCP segment after ip's header (hlen bytes) is whole and its checksum holds
 * (RFC 793 3.1 pseudo-header), as tcp_input would check it for this netif. */
static bool segment_valid(struct pbuf *p, const struct ip_hdr *ip, u16_t hlen, struct netif *inp)
{
    u16_t iplen = lwip_ntohs(IPH_LEN(ip));
    (void)inp; /* used only where lwIP checks checksums per netif (LWIP_CHECKSUM_CTRL_PER_NETIF) */
    if (hlen < IP_HLEN || iplen < hlen + TCP_HLEN || iplen > p->tot_len)
        return false;
#if CHECKSUM_CHECK_TCP
    IF__NETIF_CHECKSUM_ENABLED(inp, NETIF_CHECKSUM_CHECK_TCP) {
        ip4_addr_t src, dest;
        u16_t sum;
        ip4_addr_copy(src, ip->src);
        ip4_addr_copy(dest, ip->dest);
        if (pbuf_remove_header(p, hlen) != 0)
            return false;
        sum = inet_chksum_pseudo_partial(p, IP_PROTO_TCP, (u16_t)(iplen - hlen),
                                         (u16_t)(iplen - hlen), &src, &dest);
        pbuf_add_header_force(p, hlen); /* the payload pointer back where lwIP expects it */
        return sum == 0;
    }
#endif
    return true;
}

uint64_t nomnet_syn_dropped(void)
{
    return syn_dropped;
}

int nomnet_ip4_input(struct pbuf *p, struct netif *inp)
{
    const struct ip_hdr *ip = p->payload;
    const struct tcp_hdr *tcp;
    u16_t hlen;
    struct tcp_pcb *old;
    if (nomnet_rx_shed(p)) {
        pbuf_free(p);
        return 1; /* eaten: the receive pool is past its limit (rx_budget.h) */
    }
    if (p->len < IP_HLEN || IPH_PROTO(ip) != IP_PROTO_TCP ||
        (IPH_OFFSET(ip) & PP_HTONS(IP_OFFMASK | IP_MF)) != 0)
        return 0;
    hlen = (u16_t)IPH_HL_BYTES(ip);
    if (p->len < hlen + TCP_HLEN)
        return 0;
    tcp = (const struct tcp_hdr *)((const u8_t *)p->payload + hlen);
    if ((TCPH_FLAGS(tcp) & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN && over_backlog(ip, tcp)) {
        syn_dropped++;
        pbuf_free(p);
        return 1; /* eaten */
    }
    if (tcp_tw_pcbs == NULL || !(TCPH_FLAGS(tcp) & (TCP_SYN | TCP_RST)))
        return 0;
    old = pcb_of(tcp_tw_pcbs, ip, tcp);
    if (old != NULL && ends_timewait(old, tcp) && segment_valid(p, ip, hlen, inp))
        tcp_abort(old); /* a TIME-WAIT pcb is just freed: no RST goes out */
    return 0;
}
