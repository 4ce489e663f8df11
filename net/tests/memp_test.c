/*
 * memp_test.c: host tests of lwIP's pools as net/ builds them (lwip_memp.c, in place of lwIP's
 * memp.c): nothing is memory until it is first allocated, then a step at a time; a pool still
 * gives exactly its bound at once, reuses what is freed, and keeps lwIP's statistics.
 */
#include <stdint.h>
#include <string.h>

#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/stats.h"

#include "../../libnom/tests/host/check.h"
#include "lwip_memp.h"

#define STEP (64u << 10) /* lwip_memp.c's POOL_STEP */

static void *pcb[MEMP_NUM_TCP_PCB + 1];

static struct nomnet_memp_stats stats_of(memp_t type)
{
    struct nomnet_memp_stats st;
    nomnet_memp_get_stats(type, &st);
    return st;
}

static void nothing_mapped_before_first_allocation(void)
{
    struct nomnet_memp_stats st = stats_of(MEMP_PBUF_POOL);
    CHECK(st.cut == 0 && st.mapped == 0 && st.num == PBUF_POOL_SIZE);
    CHECK(st.reserved == (size_t)st.num * st.element_size);
    CHECK(stats_of(MEMP_TCP_PCB).mapped == 0);
}

static void first_allocation_maps_one_step(void)
{
    pcb[0] = memp_malloc(MEMP_TCP_PCB);
    struct nomnet_memp_stats st = stats_of(MEMP_TCP_PCB);
    CHECK(pcb[0] != NULL && (uintptr_t)pcb[0] % MEM_ALIGNMENT == 0);
    CHECK(st.cut == 1 && st.mapped == STEP);
    memset(pcb[0], 0xa5, st.element_size); /* the whole element is memory */
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->used == 1);
}

static void freed_element_is_reused(void)
{
    memp_free(MEMP_TCP_PCB, pcb[0]);
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->used == 0);
    CHECK(memp_malloc(MEMP_TCP_PCB) == pcb[0]);
    CHECK(stats_of(MEMP_TCP_PCB).cut == 1); /* off the free list, not cut again */
    memp_free(MEMP_TCP_PCB, NULL);         /* lwIP's memp_free takes NULL too */
}

/* To the bound: exactly num at once, no two overlapping, then NULL counted as lwIP counts an
 * empty pool; all back, and the pool serves again. */
static void pool_gives_its_bound_and_no_more(void)
{
    unsigned n = 1; /* pcb[0] is held since the case above */
    size_t size = stats_of(MEMP_TCP_PCB).element_size;
    while (n <= MEMP_NUM_TCP_PCB && (pcb[n] = memp_malloc(MEMP_TCP_PCB)) != NULL)
        memset(pcb[n], (int)n, size), n++;
    struct nomnet_memp_stats st = stats_of(MEMP_TCP_PCB);
    CHECK(n == MEMP_NUM_TCP_PCB && st.cut == st.num && st.mapped == st.reserved);
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->used == MEMP_NUM_TCP_PCB);
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->max == MEMP_NUM_TCP_PCB);
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->err == 1);
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->avail == MEMP_NUM_TCP_PCB);
    for (unsigned i = 1; i < n; i++)
        CHECK(((unsigned char *)pcb[i])[0] == (unsigned char)i
              && ((unsigned char *)pcb[i])[size - 1] == (unsigned char)i);
    while (n > 0)
        memp_free(MEMP_TCP_PCB, pcb[--n]);
    CHECK(lwip_stats.memp[MEMP_TCP_PCB]->used == 0);
    CHECK(memp_malloc(MEMP_TCP_PCB) != NULL);
    CHECK(stats_of(MEMP_PBUF_POOL).mapped == 0); /* another pool: untouched by all this */
}

/* memp_init again: every element is free, as lwIP's own memp.c leaves its pools, also the
 * ones still held (lwIP re-initialises only a stack it has stopped using). */
static void init_again_frees_the_whole_pool(void)
{
    size_t mapped = stats_of(MEMP_TCP_PCB).mapped;
    memp_init();
    unsigned n = 0;
    while (n <= MEMP_NUM_TCP_PCB && (pcb[n] = memp_malloc(MEMP_TCP_PCB)) != NULL)
        n++;
    CHECK(n == MEMP_NUM_TCP_PCB);
    CHECK(stats_of(MEMP_TCP_PCB).mapped == mapped); /* the same memory, not more */
}

int main(void)
{
    lwip_init(); /* memp_init among the rest: lwIP's own start allocates nothing from these */
    RUN(nothing_mapped_before_first_allocation);
    RUN(first_allocation_maps_one_step);
    RUN(freed_element_is_reused);
    RUN(pool_gives_its_bound_and_no_more);
    RUN(init_again_frees_the_whole_pool);
    return failures ? 1 : 0;
}
