/*
 * arp_test.c: host tests of how net/'s lwIP configuration (lwipopts.h) holds packets while an
 * address resolves: a burst to an address nobody has told us the MAC of (QEMU's user networking:
 * every client is behind the gateway) must leave whole once the ARP reply comes. lwIP's default
 * kept 3 and dropped the oldest; a fresh boot's first 4 connections then lost a SYN-ACK, and
 * that connection waited 3 s for lwIP's retransmission (results/first-connections-2026-11-29-
 * arp-queue).
 * And the header cache in front of ARP (link_cache.c): it sends what etharp_output would have
 * sent, and forgets when lwIP's table may change.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/prot/etharp.h"
#include "lwip/prot/ethernet.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "../link_cache.h"

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
    link_cache_learn(n, p);
    if (nsent < SENT_MAX)
        pbuf_copy_partial(p, sent[nsent], sizeof sent[0], 0);
    nsent++;
    return ERR_OK;
}

static err_t fake_init(struct netif *n)
{
    n->linkoutput = record;
    n->output = link_cache_output;
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

/* An ARP reply: addr is at mac. */
static void arp_reply(const ip4_addr_t *addr, const uint8_t mac[6])
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, SIZEOF_ETH_HDR + SIZEOF_ETHARP_HDR, PBUF_RAM);
    CHECK(p != NULL);
    uint8_t *f = p->payload;
    memcpy(f, our_mac, 6);
    memcpy(f + 6, mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    uint8_t *a = f + SIZEOF_ETH_HDR;
    a[0] = 0, a[1] = 1, a[2] = 0x08, a[3] = 0x00, a[4] = 6, a[5] = 4, a[6] = 0, a[7] = 2;
    memcpy(a + 8, mac, 6);
    memcpy(a + 14, &addr->addr, 4);
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
    arp_reply(&gw, gw_mac);
    CHECK(nsent == 1 + BURST);                             /* every packet of the burst ... */
    for (unsigned i = 0; i < BURST; i++) {
        CHECK(memcmp(sent[1 + i], gw_mac, 6) == 0);        /* ... to the gateway's MAC ... */
        CHECK(sent[1 + i][SIZEOF_ETH_HDR + 23] == i);      /* ... in the order it was sent */
    }
}

/* One packet through the netif's output, as ip4_output hands it over; the frame is sent[nsent - 1]. */
static void send_one(const ip4_addr_t *to, uint8_t mark)
{
    struct pbuf *p = packet(mark);
    CHECK(netif.output(&netif, p, to) == ERR_OK);
    pbuf_free(p);
}

static void check_last_frame(const uint8_t dest[6], uint8_t mark)
{
    const uint8_t *f = sent[nsent - 1];
    CHECK(memcmp(f, dest, 6) == 0);
    CHECK(memcmp(f + 6, our_mac, 6) == 0);
    CHECK(f[12] == 0x08 && f[13] == 0x00);
    CHECK(f[SIZEOF_ETH_HDR + 23] == mark);
}

/* A peer on the subnet, resolved: the first packet goes through ARP, the next ones through the
 * cache, byte for byte the same frame. */
static void a_resolved_peers_header_is_remembered(void)
{
    static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0xaa, 0x00, 0x07};
    ip4_addr_t peer;
    IP4_ADDR(&peer, 10, 0, 2, 7);
    link_cache_forget();
    nsent = 0;
    send_one(&peer, 1);                                   /* unresolved: an ARP request ... */
    CHECK(nsent == 1 && sent[0][12] == 0x08 && sent[0][13] == 0x06);
    arp_reply(&peer, mac);                                /* ... the packet it held leaves */
    CHECK(nsent == 2);
    check_last_frame(mac, 1);
    struct link_cache_stats before = link_cache_stats();
    send_one(&peer, 2);                                   /* learned from this one */
    check_last_frame(mac, 2);
    send_one(&peer, 3);
    send_one(&peer, 4);
    check_last_frame(mac, 4);
    struct link_cache_stats after = link_cache_stats();
    CHECK(after.misses - before.misses == 1);
    CHECK(after.hits - before.hits == 2);
    CHECK(nsent == 5);
}

/* A peer whose MAC changes (a gratuitous ARP, a new VM at the address): the next packet goes
 * to the new MAC, never to the remembered one. */
static void an_arp_frame_makes_it_forget(void)
{
    static const uint8_t old_mac[6] = {0x52, 0x54, 0x00, 0xaa, 0x00, 0x08};
    static const uint8_t new_mac[6] = {0x52, 0x54, 0x00, 0xbb, 0x00, 0x08};
    ip4_addr_t peer;
    IP4_ADDR(&peer, 10, 0, 2, 8);
    arp_reply(&peer, old_mac);
    send_one(&peer, 1);
    send_one(&peer, 2);
    check_last_frame(old_mac, 2);
    arp_reply(&peer, new_mac);
    send_one(&peer, 3);
    check_last_frame(new_mac, 3);
    send_one(&peer, 4);
    check_last_frame(new_mac, 4);
}

/* Two peers whose addresses share a slot (last bytes 9 and 17 with 8 slots) take turns: each
 * packet goes to its own peer's MAC. */
static void peers_sharing_a_slot_get_their_own_header(void)
{
    static const uint8_t mac_a[6] = {0x52, 0x54, 0x00, 0xaa, 0x00, 0x09};
    static const uint8_t mac_b[6] = {0x52, 0x54, 0x00, 0xaa, 0x00, 0x11};
    ip4_addr_t a, b;
    IP4_ADDR(&a, 10, 0, 2, 9);
    IP4_ADDR(&b, 10, 0, 2, 17);
    arp_reply(&a, mac_a);
    arp_reply(&b, mac_b);
    for (uint8_t i = 0; i < 6; i++) {
        send_one(i & 1 ? &b : &a, i);
        check_last_frame(i & 1 ? mac_b : mac_a, i);
    }
}

/* A destination off the subnet goes to the gateway's MAC, remembered or not; broadcast to
 * everyone's. */
static void off_subnet_and_broadcast_headers(void)
{
    static const uint8_t all[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ip4_addr_t far, gw, bcast;
    IP4_ADDR(&far, 192, 0, 2, 1);
    IP4_ADDR(&gw, 10, 0, 2, 2);
    IP4_ADDR(&bcast, 10, 0, 2, 255);
    arp_reply(&gw, gw_mac);
    for (uint8_t i = 0; i < 3; i++) {
        send_one(&far, i);
        check_last_frame(gw_mac, i);
        send_one(&bcast, i);
        check_last_frame(all, i);
    }
}

/* What is remembered lives one ARP timer period: after it, the next packet asks lwIP's table
 * again (which ages its entries on that timer). */
static void it_forgets_after_one_arp_period(void)
{
    static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0xaa, 0x00, 0x0a};
    ip4_addr_t peer;
    IP4_ADDR(&peer, 10, 0, 2, 10);
    arp_reply(&peer, mac);
    send_one(&peer, 1);
    struct link_cache_stats before = link_cache_stats();
    send_one(&peer, 2);
    CHECK(link_cache_stats().hits == before.hits + 1);
    struct timespec nap = { 1, 100 * 1000 * 1000 }; /* past ARP_TMR_INTERVAL (1 s) */
    nanosleep(&nap, NULL);
    sys_check_timeouts();
    CHECK(link_cache_stats().forgets > before.forgets);
    before = link_cache_stats();
    send_one(&peer, 3);
    check_last_frame(mac, 3);
    CHECK(link_cache_stats().misses == before.misses + 1);
}

int main(void)
{
    ip4_addr_t ip, mask, gw;
    lwip_init();
    IP4_ADDR(&ip, 10, 0, 2, 15);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 10, 0, 2, 2);
    CHECK(netif_add(&netif, &ip, &mask, &gw, NULL, fake_init, link_cache_input) != NULL);
    netif_set_up(&netif);
    netif_set_link_up(&netif);
    RUN(a_burst_waits_whole_for_the_gateways_mac);
    RUN(a_resolved_peers_header_is_remembered);
    RUN(an_arp_frame_makes_it_forget);
    RUN(peers_sharing_a_slot_get_their_own_header);
    RUN(off_subnet_and_broadcast_headers);
    RUN(it_forgets_after_one_arp_period);
    return failures ? 1 : 0;
}
