/*
 * netloop.h: who drives the stack (inside net/). The NIC is polled from libnom's idle hook
 * (no thread runnable) and from one libnom timer set to lwIP's next timeout, and, when the
 * core is about to block, to the driver's batching deadline (vnet_next_deadline). Socket calls
 * end with netloop_commit(): the stack's batch of frames goes to the driver, which sends it now
 * (W = 0) or by W (paper 3.6), and a batch whose deadline has passed is served there, so W is
 * honoured while threads keep the core busy without a timer per batch. All functions expect the
 * caller to hold the stack lock (nom_preempt_disable) and do nothing before netloop_attach().
 */
#ifndef NOM_NET_NETLOOP_H
#define NOM_NET_NETLOOP_H

#include "lwip/netif.h"

struct vnet;

/* Initializes lwIP once (pools, heap, timers); every entry point that may be first calls it,
 * so sockets can be created before nom_net_start(). Idempotent. */
void net_stack_init(void);
/* Registers the idle hook and the timer for this device and netif. */
void netloop_attach(struct vnet *dev, struct netif *netif);
/* One pass: poll the device, lwIP timeouts, commit the tx batch, re-arm the timer. Returns the
 * number of frames received. */
int netloop_run(void);
/* Ends a batch of the stack's output (vnet_tx_commit) and re-arms the timer. */
void netloop_commit(void);
/* Hands the frames the driver holds to the stack now (paper 3.6, rx condition 3). */
void netloop_rx_flush(void);
struct vnet *netloop_device(void);
/* What sys_now() (sys_arch.c) returned last: with sys_timeouts_sleeptime() it gives lwIP's
 * next due time without a second clock read. */
static inline u32_t nomnet_sys_now_last(void)
{
    extern u32_t nomnet_sys_now_last_ms;
    return nomnet_sys_now_last_ms;
}
/* How many times sys_now() ran: lwIP reads it whenever it adds or runs timeouts
 * (sys_timeout, sys_check_timeouts), so while the count stands its next due time stands too.
 * Inline: netloop asks it at every socket call (issue 16). */
static inline uint64_t nomnet_sys_now_calls(void)
{
    extern uint64_t nomnet_sys_now_count;
    return nomnet_sys_now_count;
}
/* At exit (nom_net_start registers it with atexit): waits, at most a second, until the device
 * has taken every frame the stack sent, so the last answers are not lost to the reset the
 * kernel gives a NIC whose owner ended. Takes the stack lock itself. */
void netloop_drain(void);

#endif /* NOM_NET_NETLOOP_H */
