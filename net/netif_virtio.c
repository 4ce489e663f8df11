/*
 * netif_virtio.c: the lwIP network interface over nom's virtio-net driver
 * (drivers/virtio-net/virtio_net.h). lwIP's ethernetif.c shape: init, linkoutput, input.
 *
 * Transmit: a frame leaves lwIP as a pbuf chain; we hand the chain to the driver as a gather
 * list (vnet_iov), without copying. The driver copies it once into its own DMA buffer (its
 * contract: the stack's pbufs are never pinned for W us or until the device completes), so
 * that copy is the only one on the transmit path. vnet_tx_enqueue adds the frame to the
 * driver's batch; netloop_commit() ends the stack's batch (paper 3.6).
 * When the transmit ring is full, frames wait in a backlog here (copied: lwIP may rewrite a
 * segment's headers after linkoutput returns) and go out as soon as completions free
 * descriptors: lwIP sends an RST only once, and a lost one would leave the peer's connection
 * open forever.
 * Receive: the driver lends frames only for the callback, so each is copied once into a pbuf
 * from lwIP's pool (copy here because a pbuf over a ring buffer would keep the ring slot
 * until the application reads: a window of unread data would starve the ring).
 */
#include <stdio.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "netif/ethernet.h"

#include "arch/cc.h"
#include "netif_virtio.h"

/* Frames the full ring refused, oldest first (about two rings' worth). */
#define TX_BACKLOG 512

static uint64_t rx_nobuf, tx_dropped, tx_gathers;
static struct pbuf *backlog[TX_BACKLOG];
static unsigned backlog_head, backlog_len;

void netif_virtio_counters(uint64_t *nobuf, uint64_t *dropped, uint64_t *gathers)
{
    *nobuf = rx_nobuf;
    *dropped = tx_dropped;
    *gathers = tx_gathers;
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

/* One frame to the driver: 0, -VNET_EAGAIN (ring full), or another driver error. */
static int tx_enqueue(struct netif *netif, struct pbuf *p)
{
    static uint8_t bounce[VNET_MTU_FRAME];
    struct vnet_iov iov[VNET_TX_IOV_MAX];
    int n = tx_gather(p, iov, bounce);
    return vnet_tx_enqueue(netif->state, iov, (unsigned)n);
}

static err_t netif_virtio_linkoutput(struct netif *netif, struct pbuf *p)
{
    struct pbuf *copy;
    int r;

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

void netif_virtio_rx(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    struct netif *netif = arg;
    for (unsigned i = 0; i < count; i++) {
        struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)frames[i].len, PBUF_POOL);
        if (p == NULL) {
            rx_nobuf++;
            if ((rx_nobuf & (rx_nobuf - 1)) == 0) /* 1, 2, 4, 8, ...: a trace, not a flood */
                printf("net: receive pool empty, frame dropped (%llu so far)\n",
                       (unsigned long long)rx_nobuf);
            continue;
        }
        pbuf_take(p, frames[i].data, (u16_t)frames[i].len);
        if (netif->input(p, netif) != ERR_OK)
            pbuf_free(p);
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

    netif->name[0] = 'v';
    netif->name[1] = 'n';
    netif->output = etharp_output;
    netif->linkoutput = netif_virtio_linkoutput;
    netif->mtu = 1500;
    netif->hwaddr_len = ETH_HWADDR_LEN;
    vnet_mac(dev, netif->hwaddr);
    if (memcmp(netif->hwaddr, zero, 6) == 0)
        pick_mac(netif->hwaddr);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    if (vnet_link_up(dev) == 1)
        netif->flags |= NETIF_FLAG_LINK_UP;
    return ERR_OK;
}
