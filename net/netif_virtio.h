/* netif_virtio.h: the lwIP netif over nom's virtio-net driver (inside net/). */
#ifndef NOM_NET_NETIF_VIRTIO_H
#define NOM_NET_NETIF_VIRTIO_H

#include <stdbool.h>

#include "lwip/netif.h"
#include "virtio_net.h"

/* netif_add() init function; netif->state must be the struct vnet. */
err_t netif_virtio_init(struct netif *netif);
/* vnet_rx_fn: gives received frames to the stack; arg is the netif. */
void netif_virtio_rx(void *arg, const struct vnet_rx_frame *frames, unsigned count);
/* Sends what waits in the backlog (frames the full ring refused) as far as the ring allows;
 * call after the driver reaped completions. Returns the frames still waiting. */
int netif_virtio_tx_drain(struct netif *netif);
/* Zero-copy receive: whether p is a pbuf over a receive buffer the driver lent (one of its
 * spares until freed), and how many such pbufs live now, of NETIF_VIRTIO_ZC_SLOTS at most:
 * the driver's spares for the default ring of 256 (VNET_RX_SPARES, half the ring). */
#define NETIF_VIRTIO_ZC_SLOTS 128
bool netif_virtio_rx_zc(const struct pbuf *p);
unsigned netif_virtio_rx_zc_used(void);
/* The netif's own drop counters (nom_net_stats). */
void netif_virtio_counters(uint64_t *rx_nobuf, uint64_t *tx_dropped, uint64_t *tx_gathers);
/* Lent frames' pbufs the driver has given back (zero-copy transmit; the driver's tx_lent
 * counts those lent). */
uint64_t netif_virtio_tx_lent_back(void);

#endif /* NOM_NET_NETIF_VIRTIO_H */
