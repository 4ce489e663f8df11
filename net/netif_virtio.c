/*
 * netif_virtio.c: the lwIP network interface over nom's virtio-net driver
 * (drivers/virtio-net/virtio_net.h). lwIP's ethernetif.c shape: init, linkoutput, input.
 *
 * Transmit, zero-copy (issue 16): a frame longer than TX_ZC_MIN that lwIP built in one pbuf of
 * its heap (every TCP segment: LWIP_NETIF_TX_SINGLE_PBUF) is lent to the driver as it lies
 * (vnet_tx_enqueue_lent): the heap's steps are physically contiguous (lwip_heap.c) and every
 * pbuf has the virtio-net header's room before its Ethernet header
 * (PBUF_LINK_ENCAPSULATION_HLEN, lwipopts.h). The pbuf is referenced while the device has it
 * (pbuf_ref here, pbuf_free in tx_lent_done, exactly once: the driver gives each cookie back
 * once, at completion or at vnet_close), and lwIP leaves a referenced segment alone: it
 * neither rewrites nor retransmits it until the reference goes (tcp_output_segment_busy), and
 * the driver reaps completions with every poll that has work and before lwIP's timers
 * (netloop.c). Anything else (a short frame, a chain, a pbuf without the room, memory outside
 * the heap or not contiguous) is handed over as a gather list (vnet_iov) and
 * copied once into the driver's own buffer. vnet_tx_enqueue* adds the frame to the driver's
 * batch; netloop_commit() ends the stack's batch (paper 3.6).
 * When the transmit ring is full, frames wait in a backlog here (copied: lwIP may rewrite a
 * segment's headers after linkoutput returns) and go out as soon as completions free
 * descriptors: lwIP sends an RST only once, and a lost one would leave the peer's connection
 * open forever.
 * Receive, zero-copy (issue 16): a frame longer than a socket copies anyway
 * (NOMSOCK_RX_COPY_MAX) goes up as a pbuf_custom over the ring's own buffer, which the driver
 * lets us keep (vnet_rx_keep) and gets back when lwIP or the socket frees the pbuf
 * (rx_zc_free: vnet_rx_release, exactly once, on every path: pbuf_free is the only way out).
 * A kept buffer's descriptor takes one of the driver's spare buffers, so the device keeps the
 * whole ring; the spares bound how many can be kept (the driver: half the ring; here
 * NETIF_VIRTIO_ZC_SLOTS), and sockets holding unread data move them to the heap once more than
 * half are lent (rx_budget.c), so that one slow reader cannot take them all; beyond the bound,
 * and for short frames, each frame is copied once into a pbuf from lwIP's pool.
 * Checksums (virtio 5.1.6.2, 5.1.6.4): when the device offloads them, lwIP computes no TCP/UDP
 * checksum on transmit (the netif's NETIF_CHECKSUM_GEN_TCP/UDP are off) and tx_csum_of() asks
 * the device for it with the pseudo header's sum; on receive, lwIP's TCP/UDP check is switched
 * off for just the frames the device vouches for (ethernet_input runs each frame to completion
 * before the next: NO_SYS=1).
 */
#include <stdio.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ethernet.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "netif/ethernet.h"

#include "arch/cc.h"
#include "link_cache.h"
#include "lwip_heap.h"
#include "netif_virtio.h"
#include "sock.h"

/* Frames the full ring refused, oldest first (about two rings' worth). */
#define TX_BACKLOG 512

static uint64_t rx_nobuf, tx_dropped, tx_gathers, tx_lent_back;
static struct pbuf *backlog[TX_BACKLOG];
static unsigned backlog_head, backlog_len;

void netif_virtio_counters(uint64_t *nobuf, uint64_t *dropped, uint64_t *gathers)
{
    *nobuf = rx_nobuf;
    *dropped = tx_dropped;
    *gathers = tx_gathers;
}

uint64_t netif_virtio_tx_lent_back(void)
{
    return tx_lent_back;
}

/* The driver gives a lent frame's pbuf back: the device has sent it, or was reset. */
static void tx_lent_done(void *arg, void *cookie)
{
    (void)arg;
    tx_lent_back++;
    pbuf_free(cookie);
}

/* Frames up to this many bytes are copied, not lent: lending costs about 70 instructions more
 * than copying besides the copy (the completion reaped, the callback, a pbuf_free more), and a
 * copy of n bytes about 10 + n / 8 (rep movsq, counted per word by the TCG plugin): nhttpd's
 * answers (a 175-byte page) gained nothing lent, NetPIPE's and memcached's 1 KiB ones save
 * about 75 each (issue 16; results/per-request-2026-12-02-read-wait-and-tx-zero-copy). */
#define TX_ZC_MIN 512u

/* Where p's frame can be lent from: longer than TX_ZC_MIN, one pbuf of lwIP's heap with the
 * header's room before the frame, all of it in one physically contiguous step. *phys: the
 * frame's physical address. */
static bool tx_lendable(const struct pbuf *p, uint64_t *phys)
{
    const u8_t *room = (const u8_t *)p->payload - VNET_TX_HEADROOM;
    if (p->len <= TX_ZC_MIN || p->next != NULL
        || pbuf_get_allocsrc(p) != PBUF_TYPE_ALLOC_SRC_MASK_STD_HEAP
        || room < (const u8_t *)p + LWIP_MEM_ALIGN_SIZE(sizeof(struct pbuf)) /* pbuf.c's layout */
        || !nomnet_heap_phys(room, VNET_TX_HEADROOM + (size_t)p->len, phys))
        return false;
    *phys += VNET_TX_HEADROOM;
    return true;
}

/* A chain longer than the driver's gather list is flattened into one bounce buffer. */
static int tx_gather(struct pbuf *p, struct vnet_iov *iov, uint8_t *bounce)
{
    unsigned n = 0;
    for (struct pbuf *q = p; q != NULL; q = q->next) {
        if (q->len == 0)
            continue;
        if (n == VNET_TX_IOV_MAX) {
            tx_gathers++;
            iov[0].base = bounce;
            iov[0].len = pbuf_copy_partial(p, bounce, VNET_MTU_FRAME, 0);
            return 1;
        }
        iov[n].base = q->payload;
        iov[n].len = q->len;
        n++;
    }
    return (int)n;
}

/* Zero-copy receive's pbufs (see the top); frames up to RX_ZC_MIN bytes are copied: their
 * payload fits what a socket copies out of the pool anyway. */
#define RX_ZC_MIN (SIZEOF_ETH_HDR + IP_HLEN + TCP_HLEN + NOMSOCK_RX_COPY_MAX)
struct rx_zc {
    struct pbuf_custom pc; /* first: the pbuf lwIP frees is this */
    struct vnet *dev;
    int handle;
    struct rx_zc *next_free;
};
static struct rx_zc zc_slots[NETIF_VIRTIO_ZC_SLOTS], *zc_free;
static unsigned zc_used;

static void rx_zc_free(struct pbuf *p)
{
    struct rx_zc *z = (struct rx_zc *)p;
    vnet_rx_release(z->dev, z->handle); /* the only release of this handle */
    z->next_free = zc_free;
    zc_free = z;
    zc_used--;
}

bool netif_virtio_rx_zc(const struct pbuf *p)
{
    return (p->flags & PBUF_FLAG_IS_CUSTOM)
           && ((const struct pbuf_custom *)p)->custom_free_function == rx_zc_free;
}

unsigned netif_virtio_rx_zc_used(void)
{
    return zc_used;
}

/* A pbuf over the frame's own ring buffer, or NULL: no slot left, or the driver's bound. */
static struct pbuf *rx_zc_wrap(struct vnet *dev, const struct vnet_rx_frame *frame)
{
    if (zc_free == NULL)
        return NULL;
    int handle = vnet_rx_keep(dev, frame);
    if (handle < 0)
        return NULL;
    struct rx_zc *z = zc_free;
    zc_free = z->next_free;
    zc_used++;
    z->dev = dev;
    z->handle = handle;
    z->pc.custom_free_function = rx_zc_free;
    return pbuf_alloced_custom(PBUF_RAW, (u16_t)frame->len, PBUF_REF, &z->pc,
                               (void *)frame->data, (u16_t)frame->len);
}

/* The folded, uncomplemented sum of an IPv4 TCP/UDP pseudo header (RFC 793 3.1, RFC 768), as
 * the checksum field holds it before the device adds the segment (virtio 5.1.6.2). */
static u16_t pseudo_header_sum(const u8_t *ip, u8_t proto, u16_t l4_len)
{
    u32_t src, dst;
    memcpy(&src, ip + 12, 4); /* the addresses as two 32-bit loads, not four 16-bit steps */
    memcpy(&dst, ip + 16, 4);
    uint64_t acc = (uint64_t)lwip_ntohl(src) + lwip_ntohl(dst); /* at most 33 bits */
    acc = (acc >> 16) + (acc & 0xffff) + proto + l4_len;      /* at most 18 bits */
    acc = (acc >> 16) + (acc & 0xffff);
    acc = (acc >> 16) + (acc & 0xffff);
    return lwip_htons((u16_t)acc);
}

/* Fills *csum for an unfragmented IPv4 TCP or UDP frame, whose checksum lwIP left to the
 * device (the netif's GEN_TCP/UDP are off); returns 0 for any other frame (ARP, ICMP: lwIP
 * summed them; a UDP fragment: its checksum stays 0, "none", RFC 768). The Ethernet header
 * and the IP header's first 20 bytes are read where lwIP built them, in the first pbuf, or
 * from a copy if it is shorter. */
static int tx_csum_of(struct pbuf *p, struct vnet_tx_csum *csum)
{
    u8_t copy[SIZEOF_ETH_HDR + IP_HLEN];
    const u8_t *eth = p->payload, *ip;
    if (p->tot_len < sizeof copy)
        return 0;
    if (p->len < sizeof copy) {
        pbuf_copy_partial(p, copy, sizeof copy, 0);
        eth = copy;
    }
    ip = eth + SIZEOF_ETH_HDR;
    if (eth[12] != 0x08 || eth[13] != 0x00
        || ip[0] >> 4 != 4 || (ip[6] & 0x3f) != 0 || ip[7] != 0) /* version, MF, offset */
        return 0;
    u16_t ihl = (u16_t)((ip[0] & 0x0f) * 4), total = (u16_t)(ip[2] << 8 | ip[3]);
    if (ip[9] == IP_PROTO_TCP)
        csum->offset = 16;
    else if (ip[9] == IP_PROTO_UDP)
        csum->offset = 6;
    else
        return 0;
    if (ihl < IP_HLEN || total < ihl + csum->offset + 2u || SIZEOF_ETH_HDR + total > p->tot_len)
        return 0;
    csum->start = (u16_t)(SIZEOF_ETH_HDR + ihl);
    csum->pseudo = pseudo_header_sum(ip, ip[9], (u16_t)(total - ihl));
    return 1;
}

/* One frame to the driver: 0, -VNET_EAGAIN (ring full), or another driver error. */
static int tx_enqueue(struct netif *netif, struct pbuf *p)
{
    static uint8_t bounce[VNET_MTU_FRAME];
    struct vnet_iov iov[VNET_TX_IOV_MAX];
    struct vnet_tx_csum csum;
    uint64_t phys;
    /* The netif generates TCP/UDP sums exactly when the device does not (netif_virtio_init):
     * its flags say so without a call into the driver per frame. */
    int offload = !(netif->chksum_flags & NETIF_CHECKSUM_GEN_TCP) && tx_csum_of(p, &csum);
    if (tx_lendable(p, &phys)) {
        pbuf_ref(p);
        int r = vnet_tx_enqueue_lent(netif->state, p->payload, phys, p->len,
                                     offload ? &csum : NULL, p);
        if (r != 0)
            pbuf_free(p); /* not lent: only our reference goes */
        return r;
    }
    int n = tx_gather(p, iov, bounce);
    return vnet_tx_enqueue_csum(netif->state, iov, (unsigned)n, offload ? &csum : NULL);
}

/* lwIP checks this frame's TCP/UDP checksum unless the device vouched for it. */
static void rx_check_csum(struct netif *netif, const struct vnet_rx_frame *frame)
{
    u16_t flags = netif->chksum_flags | NETIF_CHECKSUM_CHECK_TCP | NETIF_CHECKSUM_CHECK_UDP;
    if (frame->flags & VNET_RX_CSUM_OK)
        flags &= (u16_t)~(NETIF_CHECKSUM_CHECK_TCP | NETIF_CHECKSUM_CHECK_UDP);
    NETIF_SET_CHECKSUM_CTRL(netif, flags);
}

static err_t netif_virtio_linkoutput(struct netif *netif, struct pbuf *p)
{
    struct pbuf *copy;
    int r;

    link_cache_learn(netif, p);
    if (p->tot_len > VNET_MTU_FRAME) {
        tx_dropped++;
        return ERR_ARG;
    }
    if (backlog_len == 0) { /* else keep the order: behind the backlog */
        r = tx_enqueue(netif, p);
        if (r == 0)
            return ERR_OK;
        if (r != -VNET_EAGAIN) { /* a broken device */
            tx_dropped++;
            return ERR_IF;
        }
    }
    copy = backlog_len < TX_BACKLOG ? pbuf_clone(PBUF_RAW, PBUF_RAM, p) : NULL;
    if (copy == NULL) {
        tx_dropped++;
        return ERR_MEM; /* TCP keeps the segment and retries (netif_virtio_tx_drain) */
    }
    backlog[(backlog_head + backlog_len++) % TX_BACKLOG] = copy;
    return ERR_OK;
}

int netif_virtio_tx_drain(struct netif *netif)
{
    unsigned sent = 0;
    while (backlog_len > 0) {
        struct pbuf *p = backlog[backlog_head];
        int r = tx_enqueue(netif, p);
        if (r == -VNET_EAGAIN)
            break;
        if (r != 0)
            tx_dropped++;
        pbuf_free(p);
        backlog_head = (backlog_head + 1) % TX_BACKLOG;
        backlog_len--;
        sent++;
    }
    if (sent > 0)
        tcp_txnow(); /* segments refused with ERR_MEM meanwhile (TF_NAGLEMEMERR) */
    return (int)backlog_len;
}

/* The frame copied once into a pbuf from lwIP's pool, or NULL (pool empty: dropped). */
static struct pbuf *rx_copy(const struct vnet_rx_frame *frame)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)frame->len, PBUF_POOL);
    if (p == NULL) {
        rx_nobuf++;
        if ((rx_nobuf & (rx_nobuf - 1)) == 0) /* 1, 2, 4, 8, ...: a trace, not a flood */
            printf("net: receive pool empty, frame dropped (%llu so far)\n",
                   (unsigned long long)rx_nobuf);
        return NULL;
    }
    pbuf_take(p, frame->data, (u16_t)frame->len);
    return p;
}

void netif_virtio_rx(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    struct netif *netif = arg;
    for (unsigned i = 0; i < count; i++) {
        struct pbuf *p = NULL;
        if (frames[i].len > RX_ZC_MIN)
            p = rx_zc_wrap(netif->state, &frames[i]);
        if (p == NULL && (p = rx_copy(&frames[i])) == NULL)
            continue;
        rx_check_csum(netif, &frames[i]);
        if (netif->input(p, netif) != ERR_OK)
            pbuf_free(p);
        /* A transmit batch that came due while this receive batch was being taken in goes
         * now, not after the whole batch: lwIP's input of a "many" batch is tens of us of
         * work, which the transmit hold otherwise waited out (issue 11 item 4). */
        vnet_tx_commit(netif->state);
    }
}

/* A MAC for a device that offers none (virtio 5.1.4: then the driver picks one): locally
 * administered, unicast, random. */
static void pick_mac(uint8_t mac[6])
{
    unsigned r = LWIP_RAND();
    mac[0] = 0x02; mac[1] = 0x6e; mac[2] = 0x6f; /* "no" */
    mac[3] = (uint8_t)r; mac[4] = (uint8_t)(r >> 8); mac[5] = (uint8_t)(r >> 16);
}

err_t netif_virtio_init(struct netif *netif)
{
    static const uint8_t zero[6];
    struct vnet *dev = netif->state;

    static bool zc_ready; /* the slots serve every netif of the process (host tests: two) */
    for (unsigned i = 0; i < NETIF_VIRTIO_ZC_SLOTS && !zc_ready; i++) {
        zc_slots[i].next_free = zc_free;
        zc_free = &zc_slots[i];
    }
    zc_ready = true;
    vnet_set_tx_done(dev, tx_lent_done, NULL);
    netif->name[0] = 'v';
    netif->name[1] = 'n';
    netif->output = link_cache_output; /* etharp_output unless the header is known */
    netif->linkoutput = netif_virtio_linkoutput;
    netif->mtu = 1500;
    netif->hwaddr_len = ETH_HWADDR_LEN;
    vnet_mac(dev, netif->hwaddr);
    if (memcmp(netif->hwaddr, zero, 6) == 0)
        pick_mac(netif->hwaddr);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    if (vnet_offloads(dev) & VNET_OFFLOAD_TX_CSUM) /* the device sums TCP and UDP: tx_csum_of */
        NETIF_SET_CHECKSUM_CTRL(netif, NETIF_CHECKSUM_ENABLE_ALL
                                & ~(NETIF_CHECKSUM_GEN_TCP | NETIF_CHECKSUM_GEN_UDP));
    printf("net: checksum offload tx %s, rx %s\n", /* what the NIC agreed to, for the log */
           vnet_offloads(dev) & VNET_OFFLOAD_TX_CSUM ? "on" : "off",
           vnet_offloads(dev) & VNET_OFFLOAD_RX_CSUM ? "on" : "off");
    if (vnet_link_up(dev) == 1)
        netif->flags |= NETIF_FLAG_LINK_UP;
    return ERR_OK;
}
