/*
 * rx_budget.h: the receive pool's budget (rx_budget.c). Every received frame is copied from the
 * ring into a pbuf of lwIP's PBUF_POOL (netif_virtio.c), and that pbuf stays with the data until
 * the application reads it. Sockets that hold unread data must never be able to empty the pool:
 * with the pool empty every received frame is dropped, the ACKs, resets and FINs that would let
 * those sockets drain or close among them, and the whole stack stops answering (issue 10:
 * sixty clients that stop reading while they send did it to memcached). Two rules keep a
 * reserve for the frames that carry no data:
 *   - under pressure (more than half the pool in use) sockets move what they queue to the heap;
 *     likewise the receive buffers the driver lends for zero-copy receive (netif_virtio.c) when
 *     more than half of the netif's slots for them are in use: each is one of the driver's
 *     spares, and with none left every frame is copied into the pool;
 *   - past the limit (seven eighths in use) a packet that carries data for a socket (a TCP
 *     payload, a UDP datagram, a fragment) is dropped on arrival, as Linux drops data under
 *     memory pressure; its sender retransmits. Segments without data (SYN, ACK, FIN, RST),
 *     ICMP and ARP always go through.
 */
#ifndef NOM_NET_RX_BUDGET_H
#define NOM_NET_RX_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "lwip/pbuf.h"

/* Whether sockets should move queued data out of the pool (more than half of it in use). */
bool nomnet_rx_pressure(void);
/* For a chain holding pool pbufs or lent ring buffers, when `always` or under pressure (of
 * either): a copy of it, in a small slot when it fits one, else on the heap (p is then freed,
 * the ring buffers go back). Otherwise, or
 * if the heap is full, p itself: the shedding below still bounds the pool, the netif's slots
 * the ring buffers. */
struct pbuf *nomnet_rx_unpool(struct pbuf *p, bool always);
/* How many of the copies nomnet_rx_unpool makes of small segments (in slots of their own, not on
 * the heap) are held now. */
unsigned nomnet_rx_small_used(void);
/* Whether the IPv4 packet p (an IP header first) must be dropped on arrival: the pool is past its
 * limit and p carries data for a socket. Counts what it sheds. */
bool nomnet_rx_shed(const struct pbuf *p);
/* Packets nomnet_rx_shed dropped, and the most pool pbufs ever in use at once. */
uint64_t nomnet_rx_shed_count(void);
uint32_t nomnet_rx_pool_peak(void);

#endif /* NOM_NET_RX_BUDGET_H */
