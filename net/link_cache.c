/*
 * link_cache.c: the Ethernet header of recently used IPv4 destinations (link_cache.h says
 * when it forgets). Direct-mapped by the address's last byte: one peer (a benchmark's client,
 * QEMU's gateway) is always found in one probe, and a few peers of one subnet do not collide.
 * A miss costs what lwIP costs anyway plus one comparison in linkoutput.
 */
#include <stdbool.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/prot/ethernet.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"

#include "link_cache.h"

#define SLOTS 8 /* a power of two */

struct slot {
    const struct netif *netif; /* NULL: empty */
    u32_t ip;                  /* the destination handed to output, network order */
    struct eth_hdr hdr;        /* destination, source and type, as etharp_output built them */
};

static struct slot slots[SLOTS];
/* The destination etharp_output is sending to now, whose frame linkoutput may learn, and
 * its slot. */
static struct netif *learning;
static u32_t learning_ip;
static struct slot *learning_slot;
static bool expiry_armed;
static struct link_cache_stats stats;

static inline struct slot *slot_of(const ip4_addr_t *ip)
{
    return &slots[ip4_addr4(ip) & (SLOTS - 1)];
}

err_t link_cache_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *ipaddr)
{
    struct slot *s = slot_of(ipaddr);
    if (s->netif == netif && s->ip == ip4_addr_get_u32(ipaddr) &&
        pbuf_add_header(p, SIZEOF_ETH_HDR) == 0) {
        stats.hits++;
        SMEMCPY(p->payload, &s->hdr, SIZEOF_ETH_HDR);
        return netif->linkoutput(netif, p);
    }
    stats.misses++;
    learning = netif;
    learning_ip = ip4_addr_get_u32(ipaddr);
    learning_slot = s;
    err_t err = etharp_output(netif, p, ipaddr);
    learning = NULL;
    return err;
}

static void expire(void *arg)
{
    (void)arg;
    expiry_armed = false;
    link_cache_forget();
}

void link_cache_learn(struct netif *netif, const struct pbuf *frame)
{
    if (learning != netif || frame->len < SIZEOF_ETH_HDR)
        return;
    const struct eth_hdr *h = frame->payload;
    if (h->type != PP_HTONS(ETHTYPE_IP))
        return; /* an ARP request etharp_output sent first */
    struct slot *s = learning_slot;
    s->netif = netif;
    s->ip = learning_ip;
    SMEMCPY(&s->hdr, h, SIZEOF_ETH_HDR);
    learning = NULL;
    if (!expiry_armed) { /* no timer while nothing is remembered: an idle stack stays asleep */
        expiry_armed = true;
        sys_timeout(ARP_TMR_INTERVAL, expire, NULL);
    }
}

err_t link_cache_input(struct pbuf *p, struct netif *netif)
{
    if (p->len >= SIZEOF_ETH_HDR &&
        ((const struct eth_hdr *)p->payload)->type == PP_HTONS(ETHTYPE_ARP))
        link_cache_forget();
    return ethernet_input(p, netif);
}

void link_cache_forget(void)
{
    memset(slots, 0, sizeof slots);
    stats.forgets++;
}

struct link_cache_stats link_cache_stats(void)
{
    return stats;
}
