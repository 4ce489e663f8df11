/*
 * hook_test.c: host tests of net/'s IPv4 hook (tcp_hooks.c) on a single lwIP stack, no wire:
 * segments are built by hand and handed to nomnet_ip4_input as ip4_input would, with a
 * connection in TIME-WAIT in lwIP's list. The question: does the hook act only on a segment
 * that lwIP itself would accept (lengths that fit, a TCP checksum that holds)?
 */
#include <string.h>

#include "lwip/inet_chksum.h"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "../../libnom/tests/host/check.h"
#include "lwip_hooks.h"

#define US    PP_HTONL(0xc0000201u) /* 192.0.2.1: this stack */
#define PEER  PP_HTONL(0xc0000202u) /* 192.0.2.2 */
#define PORT  5001
#define PEER_PORT 40000
#define RCV_NXT 100000u

static struct netif netif; /* only its checksum flags are read */

/* A connection to PEER:PEER_PORT that waits in TIME-WAIT, having received up to RCV_NXT. */
static struct tcp_pcb *timewait_pcb(void)
{
    struct tcp_pcb *pcb = tcp_new();
    CHECK(pcb != NULL);
    ip_addr_set_ip4_u32(&pcb->local_ip, US);
    ip_addr_set_ip4_u32(&pcb->remote_ip, PEER);
    pcb->local_port = PORT;
    pcb->remote_port = PEER_PORT;
    pcb->rcv_nxt = RCV_NXT;
    pcb->state = TIME_WAIT;
    TCP_REG(&tcp_tw_pcbs, pcb);
    return pcb;
}

static int in_timewait(const struct tcp_pcb *pcb)
{
    for (struct tcp_pcb *p = tcp_tw_pcbs; p != NULL; p = p->next)
        if (p == pcb)
            return 1;
    return 0;
}

/* An IPv4 packet with a bare TCP segment (flags, seqno) from the peer; the checksum is right
 * unless damage is set; ip_len overrides the IP total length when non-zero. */
static struct pbuf *segment(u8_t flags, u32_t seqno, int damage, u16_t ip_len)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, IP_HLEN + TCP_HLEN, PBUF_RAM);
    CHECK(p != NULL);
    struct ip_hdr *ip = p->payload;
    struct tcp_hdr *tcp = (struct tcp_hdr *)((u8_t *)p->payload + IP_HLEN);
    memset(p->payload, 0, IP_HLEN + TCP_HLEN);
    IPH_VHL_SET(ip, 4, IP_HLEN / 4);
    IPH_LEN_SET(ip, lwip_htons(ip_len ? ip_len : IP_HLEN + TCP_HLEN));
    IPH_TTL_SET(ip, 64);
    IPH_PROTO_SET(ip, IP_PROTO_TCP);
    ip->src.addr = PEER;
    ip->dest.addr = US;
    IPH_CHKSUM_SET(ip, inet_chksum(ip, IP_HLEN));
    tcp->src = lwip_htons(PEER_PORT);
    tcp->dest = lwip_htons(PORT);
    tcp->seqno = lwip_htonl(seqno);
    TCPH_HDRLEN_FLAGS_SET(tcp, TCP_HLEN / 4, flags);
    tcp->wnd = lwip_htons(8192);
    ip4_addr_t src = { PEER }, dest = { US };
    pbuf_remove_header(p, IP_HLEN);
    tcp->chksum = inet_chksum_pseudo(p, IP_PROTO_TCP, TCP_HLEN, &src, &dest);
    pbuf_add_header(p, IP_HLEN);
    if (damage)
        tcp->chksum ^= 0x0100;
    return p;
}

/* Hands p to the hook as ip4_input does; the hook never eats these (no rx pressure, no
 * listener), so the packet is ours to free. */
static void hook(struct pbuf *p)
{
    CHECK(nomnet_ip4_input(p, &netif) == 0);
    CHECK(p->payload != NULL && ((struct ip_hdr *)p->payload)->dest.addr == US);
    pbuf_free(p);
}

static void syn_above_rcv_nxt_ends_timewait(void)
{
    struct tcp_pcb *pcb = timewait_pcb();
    hook(segment(TCP_SYN, RCV_NXT + 5000, 0, 0));
    CHECK(!in_timewait(pcb));
}

static void damaged_syn_leaves_timewait(void)
{
    struct tcp_pcb *pcb = timewait_pcb();
    hook(segment(TCP_SYN, RCV_NXT + 5000, 1, 0));
    CHECK(in_timewait(pcb));
    tcp_abort(pcb);
}

static void damaged_rst_leaves_timewait(void)
{
    struct tcp_pcb *pcb = timewait_pcb();
    hook(segment(TCP_RST, RCV_NXT, 1, 0));
    CHECK(in_timewait(pcb));
    hook(segment(TCP_RST, RCV_NXT, 0, 0));
    CHECK(!in_timewait(pcb));
}

static void ip_length_past_the_packet_leaves_timewait(void)
{
    struct tcp_pcb *pcb = timewait_pcb();
    hook(segment(TCP_SYN, RCV_NXT + 5000, 0, IP_HLEN + TCP_HLEN + 100));
    CHECK(in_timewait(pcb));
    hook(segment(TCP_SYN, RCV_NXT + 5000, 0, IP_HLEN + TCP_HLEN - 1));
    CHECK(in_timewait(pcb));
    tcp_abort(pcb);
}

int main(void)
{
    lwip_init();
    NETIF_SET_CHECKSUM_CTRL(&netif, NETIF_CHECKSUM_ENABLE_ALL);
    RUN(syn_above_rcv_nxt_ends_timewait);
    RUN(damaged_syn_leaves_timewait);
    RUN(damaged_rst_leaves_timewait);
    RUN(ip_length_past_the_packet_leaves_timewait);
    return failures ? 1 : 0;
}
