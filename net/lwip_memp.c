/* lwip_memp.c: lwIP's fixed-size pools (memp_malloc/memp_free: pcbs, segments, the receive
 * pbufs of PBUF_POOL, timeouts), built in place of lwIP's core/memp.c (net/Makefile) with the
 * same interface (lwip/memp.h, lwip/priv/memp_priv.h) and the same bounds: at most `num`
 * elements of a pool at once, O(1) allocation and free, lwIP's statistics kept.
 *
 * What differs: where the memory is and when it is touched. lwIP declares each pool as a
 * static array (num elements: PBUF_POOL alone is 6.3 MB, TCP_PCB 2.3 MB, lwipopts.h sizes them
 * for thousands of connections) and memp_init links every element into the free list. The
 * kernel zeroes an application's whole .bss at load and memp_init writes into every page of
 * it: nhttpd's boot paid for 9 MB it did not use (issue 16). Here each pool is address space
 * reserved at its first allocation and opened POOL_STEP at a time (lazy_region.h); an
 * element is cut from the opened part when the free list is empty and fewer than num were
 * ever cut, and goes onto the free list when freed (never back to the region).
 *
 * The descriptor's `tab` (lwIP's pointer to the pool's free list) points at the pool's whole
 * state, whose first member is that free list; `base` is unused (NULL).
 *
 * No lock: NO_SYS=1 and SYS_LIGHTWEIGHT_PROT=0 (lwipopts.h): everything that allocates runs
 * inside nom_preempt_disable() on one core. */
#include <stdio.h>

#include "lwip/opt.h"

#include "lwip/memp.h"
#include "lwip/stats.h"
/* What lwIP's memp.c includes so that memp_std.h's pools see their element types. */
#include "lwip/pbuf.h"
#include "lwip/raw.h"
#include "lwip/udp.h"
#include "lwip/tcp.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/altcp.h"
#include "lwip/ip4_frag.h"
#include "lwip/netbuf.h"
#include "lwip/api.h"
#include "lwip/priv/tcpip_priv.h"
#include "lwip/priv/api_msg.h"
#include "lwip/priv/sockets_priv.h"
#include "lwip/etharp.h"
#include "lwip/igmp.h"
#include "lwip/timeouts.h"
#include "netif/ppp/ppp_opts.h"
#include "lwip/netdb.h"
#include "lwip/dns.h"
#include "lwip/priv/nd6_priv.h"
#include "lwip/ip6_frag.h"
#include "lwip/mld6.h"

#include "lazy_region.h"
#include "lwip_memp.h"

#if MEMP_MEM_MALLOC || MEMP_OVERFLOW_CHECK || MEMP_SANITY_CHECK || MEMP_USE_CUSTOM_POOLS
#error "lwip_memp.c implements plain fixed pools only (lwipopts.h)"
#endif
#ifdef LWIP_HOOK_MEMP_AVAILABLE
#error "lwip_memp.c does not call LWIP_HOOK_MEMP_AVAILABLE"
#endif

/* 64 KiB: 42 receive pbufs or 230 pcbs per system call; a pool smaller than this is opened
 * whole at its first allocation. */
#define POOL_STEP (64u << 10)

struct lazy_pool {
    struct memp *free; /* first: the descriptor's tab points here (lwIP's free list) */
    uint16_t cut;      /* elements cut from the region so far, at most the pool's num */
    struct lazy_region region;
};

#define POOL_BYTES(num_, size_) ((size_t)(num_) * LWIP_MEM_ALIGN_SIZE(size_))
#define LWIP_MEMPOOL(name, num_, size_, desc_)                                                \
    static struct lazy_pool lazy_##name = {                                                   \
        .region = {.size = POOL_BYTES(num_, size_),                                           \
                   .step = POOL_BYTES(num_, size_) < POOL_STEP ? POOL_BYTES(num_, size_)      \
                                                               : POOL_STEP}};                 \
    LWIP_MEMPOOL_DECLARE_STATS_INSTANCE(memp_stats_##name)                                    \
    const struct memp_desc memp_##name = {DECLARE_LWIP_MEMPOOL_DESC(desc_)                    \
                                          LWIP_MEMPOOL_DECLARE_STATS_REFERENCE(memp_stats_##name) \
                                          LWIP_MEM_ALIGN_SIZE(size_), (num_), NULL,           \
                                          &lazy_##name.free};
#include "lwip/priv/memp_std.h"

const struct memp_desc *const memp_pools[MEMP_MAX] = {
#define LWIP_MEMPOOL(name, num, size, desc) &memp_##name,
#include "lwip/priv/memp_std.h"
};

static struct lazy_pool *pool_of(const struct memp_desc *desc)
{
    return (struct lazy_pool *)(void *)desc->tab;
}

/* Every element free, as lwIP's memp_init_pool leaves a pool: the next ones are cut again from
 * the start of the region, whose opened steps stay open. */
void memp_init_pool(const struct memp_desc *desc)
{
    struct lazy_pool *pool = pool_of(desc);
    pool->free = NULL; /* elements are cut as they are first needed */
    pool->cut = 0;
#if MEMP_STATS
    desc->stats->avail = desc->num;
#endif
}

void memp_init(void)
{
    for (unsigned i = 0; i < MEMP_MAX; i++) {
        memp_init_pool(memp_pools[i]);
#if LWIP_STATS && MEMP_STATS
        lwip_stats.memp[i] = memp_pools[i]->stats;
#endif
    }
}

/* A new element from the pool's region, or NULL: num were cut already, or the system has no
 * memory to open the next step (said once per pool: the stack then runs as if the pool were
 * exhausted, which lwIP handles). */
static struct memp *cut(const struct memp_desc *desc)
{
    struct lazy_pool *pool = pool_of(desc);
    if (pool->cut >= desc->num)
        return NULL;
    size_t end = (size_t)(pool->cut + 1) * desc->size;
    if (!lazy_region_open(&pool->region, end)) {
        static const struct memp_desc *said;
        if (said != desc) {
            said = desc;
            printf("net: no memory for lwIP's pool of %u-byte elements (%u of %u in use)\n",
                   desc->size, pool->cut, desc->num);
        }
        return NULL;
    }
    pool->cut++;
    return (struct memp *)(void *)(pool->region.base + end - desc->size);
}

/* The free list empty: an element cut from the region, or NULL counted as lwIP counts an
 * empty pool. Out of line, and reached by a tail call, so that the common case below keeps no
 * frame (lwIP's memp_malloc took 34 instructions per nhttpd request fewer than the first
 * version of this file, which saved registers for this call on every allocation:
 * results/per-request-2026-11-29-lazy-pools). */
__attribute__((noinline)) static void *malloc_slow(const struct memp_desc *desc)
{
    struct memp *memp = cut(desc);
#if MEMP_STATS
    if (memp == NULL)
        desc->stats->err++;
    else if (++desc->stats->used > desc->stats->max)
        desc->stats->max = desc->stats->used;
#endif
    return memp;
}

static inline void *malloc_from(const struct memp_desc *desc)
{
    struct lazy_pool *pool = pool_of(desc);
    struct memp *memp = pool->free;
    if (__builtin_expect(memp == NULL, 0))
        return malloc_slow(desc);
    pool->free = memp->next;
#if MEMP_STATS
    if (++desc->stats->used > desc->stats->max)
        desc->stats->max = desc->stats->used;
#endif
    return memp;
}

static inline void free_to(const struct memp_desc *desc, void *mem)
{
    LWIP_ASSERT("memp_free: mem properly aligned", ((mem_ptr_t)mem % MEM_ALIGNMENT) == 0);
    struct lazy_pool *pool = pool_of(desc);
    struct memp *memp = mem;
    memp->next = pool->free;
    pool->free = memp;
#if MEMP_STATS
    desc->stats->used--;
#endif
}

void *memp_malloc_pool(const struct memp_desc *desc)
{
    LWIP_ASSERT("invalid pool desc", desc != NULL);
    return desc != NULL ? malloc_from(desc) : NULL;
}

void *memp_malloc(memp_t type)
{
    LWIP_ERROR("memp_malloc: type < MEMP_MAX", (type < MEMP_MAX), return NULL;);
    return malloc_from(memp_pools[type]);
}

void memp_free_pool(const struct memp_desc *desc, void *mem)
{
    LWIP_ASSERT("invalid pool desc", desc != NULL);
    if (desc != NULL && mem != NULL)
        free_to(desc, mem);
}

void memp_free(memp_t type, void *mem)
{
    LWIP_ERROR("memp_free: type < MEMP_MAX", (type < MEMP_MAX), return;);
    if (mem != NULL)
        free_to(memp_pools[type], mem);
}

void nomnet_memp_get_stats(memp_t type, struct nomnet_memp_stats *out)
{
    const struct memp_desc *desc = memp_pools[type];
    const struct lazy_pool *pool = pool_of(desc);
    *out = (struct nomnet_memp_stats){.cut = pool->cut, .num = desc->num,
                                      .element_size = desc->size,
                                      .mapped = pool->region.mapped,
                                      .reserved = pool->region.size};
}
