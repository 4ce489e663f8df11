/*
 * lwip_hooks.h: the lwIP hooks nom's port defines (lwipopts.h names this file as
 * LWIP_HOOK_FILENAME; lwIP includes it where hooks are called). Hooks are lwIP's own
 * extension points: the stack stays unedited (STYLE.md). Implemented in net/tcp_hooks.c.
 */
#ifndef NOM_NET_LWIP_HOOKS_H
#define NOM_NET_LWIP_HOOKS_H

#include <stdint.h>

#include "lwip/ip_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"

/* Initial sequence numbers per RFC 6528: a clock plus a keyed hash of the connection. */
u32_t nomnet_tcp_isn(const ip_addr_t *local_ip, u16_t local_port, const ip_addr_t *remote_ip,
                     u16_t remote_port);
/* Sees every IPv4 packet first. Eats (frees, returns 1) a packet with data while the receive
 * pool is past its limit (rx_budget.h) and a SYN for a listener whose accept queue is full;
 * otherwise returns 0, having let a new SYN reopen a connection that waits in
 * TIME-WAIT here (RFC 1122 4.2.2.13). */
int nomnet_ip4_input(struct pbuf *p, struct netif *inp);
/* SYNs nomnet_ip4_input dropped because their listener's accept queue was full. */
uint64_t nomnet_syn_dropped(void);

/* Before lwIP processes a segment of a connection (tcp_ack_batch.c): takes back the pending
 * delayed ACK of an in-order segment, so that the ACK lwIP would send now leaves at the end of
 * the receive batch (nomnet_tcp_ack_batch_end, netloop.c). Always ERR_OK: the segment goes on. */
struct tcp_pcb;
struct tcp_hdr;
int nomnet_tcp_inpacket(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p);
/* Sends the ACKs the batch just handed to lwIP owes (one per connection), at its end. */
void nomnet_tcp_ack_batch_end(void);
/* ACKs lwIP would have sent that batch ends made unnecessary (each batch end sends one where
 * lwIP sent one per second segment). */
uint64_t nomnet_tcp_acks_batched(void);

#endif /* NOM_NET_LWIP_HOOKS_H */
