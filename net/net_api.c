/* net_api.c: starting the stack on a driver instance, the batching delay, counters and the
 * address (nom/net.h). Platform-independent: the host tests run it over a fake driver. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "lwip/netif.h"
#include <nom/net.h>
#include <nom/sched.h>
#include <nom/time.h>

#include "link_cache.h"
#include "lwip_hooks.h"
#include "rx_budget.h"
#include "netif_virtio.h"
#include "netloop.h"

#define NET_DHCP_TIMEOUT_MS 10000u
#define NET_ADDR_POLL_US 2000u

static struct netif net_if;
static int net_attached;

static int has_address(void)
{
    int r;
    nom_preempt_disable();
    r = !ip4_addr_isany_val(*netif_ip4_addr(&net_if));
    nom_preempt_enable();
    return r;
}

/* Sleeps while the scheduler's idle hook and timer run DHCP (thread context). */
static int wait_for_address(uint32_t timeout_ms)
{
    uint64_t end = nom_tsc() + nom_us_to_tsc((uint64_t)timeout_ms * 1000u);
    while (!has_address()) {
        if (nom_tsc() >= end)
            return -ETIMEDOUT;
        nom_sleep_until(nom_tsc() + nom_us_to_tsc(NET_ADDR_POLL_US));
    }
    return 0;
}

static void print_address(int dhcp)
{
    char ip[16], gw[16];
    uint32_t mask = lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(&net_if)));
    int prefix = 0;
    while (mask & 0x80000000u) {
        prefix++;
        mask <<= 1;
    }
    ip4addr_ntoa_r(netif_ip4_addr(&net_if), ip, sizeof ip);
    ip4addr_ntoa_r(netif_ip4_gw(&net_if), gw, sizeof gw);
    printf("net: %s/%d gw %s (%s) W=%u\n", ip, prefix, gw, dhcp ? "dhcp" : "static",
           (unsigned)vnet_batching_delay_us(netloop_device()));
}

/* The address is known (static, or DHCP bound): ask for the gateway's MAC now, before the
 * first answer needs it. Through QEMU's user networking every peer is behind the gateway, which
 * never asks for ours first, so without this the first connections' SYN-ACKs each waited one
 * ARP round trip (and lwIP's ARP queue, lwipopts.h ARP_QUEUE_LEN, had to hold them). */
static void net_status_changed(struct netif *netif)
{
    const ip4_addr_t *gw = netif_ip4_gw(netif);
    if (netif_is_up(netif) && !ip4_addr_isany_val(*netif_ip4_addr(netif)) && !ip4_addr_isany(gw)
        && ip4_addr_netcmp(gw, netif_ip4_addr(netif), netif_ip4_netmask(netif)))
        etharp_request(netif, gw);
}

static int net_bring_up(struct vnet *dev, const struct nom_net_config *cfg)
{
    ip4_addr_t ip, mask, gw;
    ip4_addr_set_u32(&ip, cfg->ip);
    ip4_addr_set_u32(&mask, cfg->netmask);
    ip4_addr_set_u32(&gw, cfg->gw);
    if (vnet_set_batching_delay_us(dev, cfg->batching_delay_us) != 0)
        return -EINVAL;
    net_stack_init();
    if (netif_add(&net_if, &ip, &mask, &gw, dev, netif_virtio_init, link_cache_input) == NULL)
        return -ENOMEM;
    netif_set_default(&net_if);
    netif_set_status_callback(&net_if, net_status_changed);
    netif_set_up(&net_if);
    if (cfg->ip == 0 && dhcp_start(&net_if) != ERR_OK)
        return -ENOMEM;
    netloop_attach(dev, &net_if);
    return 0;
}

int nom_net_attach(struct vnet *dev, const struct nom_net_config *cfg)
{
    int r;
    if (net_attached)
        return -EALREADY;
    nom_preempt_disable();
    r = net_bring_up(dev, cfg);
    nom_preempt_enable();
    if (r != 0)
        return r;
    net_attached = 1;
    r = wait_for_address(cfg->dhcp_timeout_ms ? cfg->dhcp_timeout_ms : NET_DHCP_TIMEOUT_MS);
    if (r == 0)
        print_address(cfg->ip == 0);
    return r;
}

int nom_net_set_batching_delay_us(uint32_t us)
{
    int r;
    if (!net_attached)
        return -ENODEV;
    nom_preempt_disable();
    r = vnet_set_batching_delay_us(netloop_device(), us) == 0 ? 0 : -EINVAL;
    /* A shorter W may release held frames now; a W of 0 sends the stack's batch at once. */
    netloop_commit();
    nom_preempt_enable();
    return r;
}

uint32_t nom_net_batching_delay_us(void)
{
    return net_attached ? vnet_batching_delay_us(netloop_device()) : 0;
}

void nom_net_stats(struct nom_net_stats *out)
{
    struct vnet_stats d;
    memset(out, 0, sizeof *out);
    if (!net_attached)
        return;
    nom_preempt_disable();
    vnet_stats(netloop_device(), &d);
    netif_virtio_counters(&out->rx_nobuf, &out->tx_dropped, &out->tx_gathers);
    out->syn_dropped = nomnet_syn_dropped();
    out->rx_shed = nomnet_rx_shed_count();
    out->rx_pool_peak = nomnet_rx_pool_peak();
    out->acks_batched = nomnet_tcp_acks_batched();
    nom_preempt_enable();
    out->rx_packets = d.rx_packets; out->rx_bytes = d.rx_bytes; out->rx_batches = d.rx_batches;
    out->tx_packets = d.tx_packets; out->tx_bytes = d.tx_bytes; out->tx_batches = d.tx_batches;
    out->tx_kicks = d.tx_kicks; out->rx_kicks = d.rx_kicks;
    out->kicks_suppressed = d.kicks_suppressed; out->interrupts = d.interrupts;
    out->polls = d.polls; out->empty_polls = d.empty_polls;
    out->arms = d.arms; out->arm_races = d.arm_races;
    out->tx_ring_full = d.tx_ring_full; out->rx_hold_full = d.rx_hold_full;
    out->rx_drained = d.rx_drained;
    out->rx_bad = d.rx_bad; out->tx_bad = d.tx_bad;
    _Static_assert(NOM_NET_LATE_BUCKETS == VNET_LATE_BUCKETS, "nom/net.h's lateness buckets");
    memcpy(out->rx_late_hist, d.rx_late_hist, sizeof out->rx_late_hist);
    memcpy(out->tx_late_hist, d.tx_late_hist, sizeof out->tx_late_hist);
}

void nom_net_addr(uint32_t *ip, uint32_t *netmask, uint32_t *gw)
{
    nom_preempt_disable();
    *ip = net_attached ? ip4_addr_get_u32(netif_ip4_addr(&net_if)) : 0;
    *netmask = net_attached ? ip4_addr_get_u32(netif_ip4_netmask(&net_if)) : 0;
    *gw = net_attached ? ip4_addr_get_u32(netif_ip4_gw(&net_if)) : 0;
    nom_preempt_enable();
}
