/*
 * fake_vnet.h: a host stand-in for the virtio-net driver (drivers/virtio-net/virtio_net.h),
 * keeping its contract (batching delay W, arm/poll, counters) over a "wire": one end of a
 * SOCK_SEQPACKET socketpair, one Ethernet frame per message. Two processes, each with its own
 * lwIP stack on one end, are two machines on a cable. The fake counts every frame and batch,
 * and can lose frames on purpose.
 */
#ifndef NOM_NET_FAKE_VNET_H
#define NOM_NET_FAKE_VNET_H

#include <stdint.h>

#include "virtio_net.h"

/* Opens a fake device on host descriptor wire with this MAC and ring size (0: 256). Like the
 * real ring, it holds at most `ring` frames between enqueue and completion; completions are
 * reaped by vnet_poll (so a small ring makes vnet_tx_enqueue say -VNET_EAGAIN). */
struct vnet *fake_vnet_open(int wire, const uint8_t mac[6], unsigned ring);
/* Drops every n-th transmitted frame from now on (0: none). */
void fake_vnet_lose_every(struct vnet *dev, unsigned n);
/* Checksum offload as if negotiated (VNET_OFFLOAD_*; call before nom_net_attach, which reads
 * it): with TX the fake completes the checksums left to it as a device would, or leaves them
 * partial (pseudo header's sum only, leave_partial: as frames from a sender on the host
 * arrive, with NEEDS_CSUM); with RX it marks every received frame VNET_RX_CSUM_OK (a device
 * that vouches: QEMU's tap, for the host's own frames). */
void fake_vnet_offload(struct vnet *dev, unsigned offloads, int leave_partial);
/* 1 once the other end of the wire has closed (the peer process exited). */
int fake_vnet_peer_gone(const struct vnet *dev);

#endif
