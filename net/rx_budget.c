/* rx_budget.c: keeps sockets from emptying the receive pool (the rules are in rx_budget.h). The
 * pool's use is lwIP's own count (MEMP_STATS, lwipopts.h). */
#include "lwip/ip4.h"
#include "lwip/memp.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"

#include "netif_virtio.h"
#include "rx_budget.h"
#include "sock.h"

#define PRESSURE_USED (PBUF_POOL_SIZE / 2)
#define SHED_USED     (PBUF_POOL_SIZE - PBUF_POOL_SIZE / 8)

static uint64_t shed;

static uint32_t pool_used(void)
{
    return lwip_stats.memp[MEMP_PBUF_POOL]->used;
}

bool nomnet_rx_pressure(void)
{
    return pool_used() > PRESSURE_USED;
}

/* Whether a pbuf of the chain holds a pool buffer (pool under pressure) or a ring buffer lent
 * by the driver (zero-copy receive, netif_virtio.c: more than half its slots in use). */
static bool holds_scarce(const struct pbuf *p, bool always)
{
    bool pool = always || nomnet_rx_pressure();
    bool ring = always || netif_virtio_rx_zc_used() > NETIF_VIRTIO_ZC_SLOTS / 2;
    for (; p != NULL; p = p->next) {
        if (pool && pbuf_get_allocsrc(p) == PBUF_TYPE_ALLOC_SRC_MASK_STD_MEMP_PBUF_POOL)
            return true;
        if (ring && netif_virtio_rx_zc(p))
            return true;
    }
    return false;
}

/* Small segments leave the pool as copies of their own size class: a slot off a free list and
 * one copy, where pbuf_clone took lwIP's heap (a first-fit walk to allocate and one to free)
 * and pbuf_copy's walk of both chains, about 290 instructions of every memcached and nhttpd
 * request, whose requests are all small (issue 16). Out of slots, the heap as before. The
 * stack runs on one core with preemption off (netloop.c), so the free list needs no lock,
 * like netif_virtio.c's zero-copy slots. */
#define RX_SMALL_SLOTS 1024 /* 560 KiB: a small unread request on each of 1024 sockets */
struct rx_small {
    struct pbuf_custom pc; /* first: the pbuf lwIP frees is this */
    struct rx_small *next_free;
    u8_t data[NOMSOCK_RX_COPY_MAX];
};
static struct rx_small small_slots[RX_SMALL_SLOTS], *small_free;
static unsigned small_used;
static bool small_linked;

static void rx_small_free(struct pbuf *p)
{
    struct rx_small *s = (struct rx_small *)p;
    s->next_free = small_free;
    small_free = s;
    small_used--;
}

/* A copy of p in a small slot, or NULL: p does not fit one, or none is free. */
static struct pbuf *copy_small(const struct pbuf *p)
{
    if (!small_linked) { /* bss: the list is made at the first use */
        for (unsigned i = 0; i < RX_SMALL_SLOTS; i++)
            small_slots[i].next_free = i + 1 < RX_SMALL_SLOTS ? &small_slots[i + 1] : NULL;
        small_free = &small_slots[0];
        small_linked = true;
    }
    struct rx_small *s = small_free;
    if (s == NULL || p->tot_len > sizeof s->data)
        return NULL;
    small_free = s->next_free;
    small_used++;
    s->pc.custom_free_function = rx_small_free;
    pbuf_copy_partial(p, s->data, p->tot_len, 0);
    return pbuf_alloced_custom(PBUF_RAW, p->tot_len, PBUF_REF, &s->pc, s->data,
                               (u16_t)sizeof s->data);
}

unsigned nomnet_rx_small_used(void)
{
    return small_used;
}

struct pbuf *nomnet_rx_unpool(struct pbuf *p, bool always)
{
    if (!holds_scarce(p, always))
        return p;
    struct pbuf *copy = copy_small(p);
    if (copy == NULL)
        copy = pbuf_clone(PBUF_RAW, PBUF_RAM, p);
    if (copy == NULL)
        return p;
    pbuf_free(p);
    return copy;
}

/* Whether the packet carries bytes a socket would queue: a fragment, a UDP datagram, or a TCP
 * segment with payload. */
static bool carries_data(const struct pbuf *p)
{
    const struct ip_hdr *ip = p->payload;
    u16_t hlen = (u16_t)IPH_HL_BYTES(ip), total = lwip_ntohs(IPH_LEN(ip));
    if ((IPH_OFFSET(ip) & PP_HTONS(IP_OFFMASK | IP_MF)) != 0)
        return true;
    switch (IPH_PROTO(ip)) {
    case IP_PROTO_UDP:
        return true;
    case IP_PROTO_TCP:
        if (p->len < hlen + TCP_HLEN)
            return false; /* malformed: lwIP drops it itself */
        return total > hlen + TCPH_HDRLEN_BYTES((const struct tcp_hdr *)((const u8_t *)ip + hlen));
    default:
        return false; /* ICMP and the rest: small, and never queued by a socket */
    }
}

bool nomnet_rx_shed(const struct pbuf *p)
{
    if (pool_used() < SHED_USED || p->len < IP_HLEN || !carries_data(p))
        return false;
    shed++;
    /* Out-of-order segments hold pool pbufs too, and the in-order data that would drain them is
     * what is shed now: let lwIP drop them at its next timer run (sys_check_timeouts), as it
     * does when the pool runs out (PBUF_POOL_FREE_OOSEQ). */
    pbuf_free_ooseq_pending = 1;
    return true;
}

uint64_t nomnet_rx_shed_count(void)
{
    return shed;
}

uint32_t nomnet_rx_pool_peak(void)
{
    return lwip_stats.memp[MEMP_PBUF_POOL]->max;
}
