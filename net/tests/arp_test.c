/*
 * arp_test.c: host tests of how net/'s lwIP configuration (lwipopts.h) holds packets while an
 * address resolves: a burst to an address nobody has told us the MAC of (QEMU's user networking:
 * every client is behind the gateway) must leave whole once the ARP reply comes. lwIP's default
 * kept 3 and dropped the oldest; a fresh boot's first 4 connections then lost a SYN-ACK, and
 * that connection waited 3 s for lwIP's retransmission (results/first-connections-2026-11-29-
 * arp-queue).
 */
#include <stdint.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/prot/etharp.h"
#include "lwip/prot/ethernet.h"
#include "netif/ethernet.h"

#include "../../libnom/tests/host/check.h"

#define BURST 16
#define SENT_MAX 64

static const uint8_t our_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t gw_mac[6] = {0x52, 0x55, 0x0a, 0x00, 0x02, 0x02};
static struct netif netif;
static uint8_t sent[SENT_MAX][64]; /* the first bytes of each frame the netif sent */
static unsigned nsent;

static err_t record(struct netif *n, struct pbuf *p)
{
    (void)n;
    if (nsent < SENT_MAX)
        pbuf_copy_partial(p, sent[nsent], sizeof sent[0], 0);
    nsent++;
    return ERR_OK;
}

static err_t fake_init(struct netif *n)
{
    n->linkoutput = record;
    n->output = etharp_output;
    n->mtu = 1500;
    n->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(n->hwaddr, our_mac, 6);
    n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    return ERR_OK;
}

/* An IP packet of 24 bytes whose last byte is mark, as the layer above hands it to ARP. */
static struct pbuf *packet(uint8_t mark)
{
    struct pbuf *p = pbuf_alloc(PBUF_IP, 24, PBUF_RAM);
    CHECK(p != NULL);
    memset(p->payload, 0, 24);
    ((uint8_t *)p->payload)[0] = 0x45;
    ((uint8_t *)p->payload)[23] = mark;
    return p;
}

/* The gateway's answer to our request: gw_addr is at gw_mac. */
static void arp_reply_from_gateway(const ip4_addr_t *gw_addr)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, SIZEOF_ETH_HDR + SIZEOF_ETHARP_HDR, PBUF_RAM);
    CHECK(p != NULL);
    uint8_t *f = p->payload;
    memcpy(f, our_mac, 6);
    memcpy(f + 6, gw_mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    uint8_t *a = f + SIZEOF_ETH_HDR;
    a[0] = 0, a[1] = 1, a[2] = 0x08, a[3] = 0x00, a[4] = 6, a[5] = 4, a[6] = 0, a[7] = 2;
    memcpy(a + 8, gw_mac, 6);
    memcpy(a + 14, &gw_addr->addr, 4);
    memcpy(a + 18, our_mac, 6);
    memcpy(a + 24, &netif_ip4_addr(&netif)->addr, 4);
    CHECK(netif.input(p, &netif) == ERR_OK);
}

static void a_burst_waits_whole_for_the_gateways_mac(void)
{
    ip4_addr_t gw;
    IP4_ADDR(&gw, 10, 0, 2, 2);
    nsent = 0;
    for (uint8_t i = 0; i < BURST; i++) {
        struct pbuf *p = packet(i);
        CHECK(etharp_output(&netif, p, &gw) == ERR_OK);
        pbuf_free(p); /* ARP keeps its own reference or copy */
    }
    CHECK(nsent == 1);                                     /* one request, nothing else yet */
    CHECK(sent[0][12] == 0x08 && sent[0][13] == 0x06);     /* ARP */
    arp_reply_from_gateway(&gw);
    CHECK(nsent == 1 + BURST);                             /* every packet of the burst ... */
    for (unsigned i = 0; i < BURST; i++) {
        CHECK(memcmp(sent[1 + i], gw_mac, 6) == 0);        /* ... to the gateway's MAC ... */
        CHECK(sent[1 + i][SIZEOF_ETH_HDR + 23] == i);      /* ... in the order it was sent */
    }
}

int main(void)
{
    ip4_addr_t ip, mask, gw;
    lwip_init();
    IP4_ADDR(&ip, 10, 0, 2, 15);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 10, 0, 2, 2);
    CHECK(netif_add(&netif, &ip, &mask, &gw, NULL, fake_init, ethernet_input) != NULL);
    netif_set_up(&netif);
    netif_set_link_up(&netif);
    RUN(a_burst_waits_whole_for_the_gateways_mac);
    return failures ? 1 : 0;
}
