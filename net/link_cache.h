/* link_cache.h: the Ethernet header of recently used IPv4 destinations (inside net/).
 *
 * A segment to a peer whose header is known skips lwIP's etharp_output: its broadcast,
 * multicast and subnet tests, the ARP table's lookup, the entry's age and ethernet_output
 * (about 110 instructions per segment, issue 16). Linux keeps the same thing with each
 * neighbour (its hardware header cache). A netif uses it by taking link_cache_output as its
 * output, link_cache_input as its input, and calling link_cache_learn from its linkoutput.
 *
 * When what it remembers could be wrong, it forgets:
 * - every received ARP frame (a reply, a request, a gratuitous announcement: each may change
 *   lwIP's table) forgets every header before lwIP's etharp_input sees it;
 * - a header lives at most ARP_TMR_INTERVAL (1 s), lwIP's ARP timer's period: lwIP ages and
 *   expires its entries there, and re-asks a used entry's owner only from etharp_output, which
 *   a busy connection then still passes through once a second. A change of the netif's
 *   address, netmask or gateway (DHCP) is followed within that second too;
 * - link_cache_forget, for the owner of a netif it removes.
 * Only what etharp_output itself built is learned: the frame of the IPv4 packet handed to it,
 * seen in linkoutput (an ARP request it sends on the way is not; a packet it queues until the
 * address resolves leaves later, unlearned). */
#ifndef NOM_NET_LINK_CACHE_H
#define NOM_NET_LINK_CACHE_H

#include <stdint.h>

#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"

/* netif->output: the remembered header, else lwIP's etharp_output (and learn its header). */
err_t link_cache_output(struct netif *netif, struct pbuf *p, const ip4_addr_t *ipaddr);
/* netif->input: forgets on an ARP frame, then lwIP's ethernet_input. */
err_t link_cache_input(struct pbuf *p, struct netif *netif);
/* From the netif's linkoutput, with each frame before it leaves. */
void link_cache_learn(struct netif *netif, const struct pbuf *frame);
void link_cache_forget(void);

struct link_cache_stats {
    uint64_t hits;   /* segments sent with a remembered header */
    uint64_t misses; /* through etharp_output */
    uint64_t forgets;
};
struct link_cache_stats link_cache_stats(void);

#endif /* NOM_NET_LINK_CACHE_H */
