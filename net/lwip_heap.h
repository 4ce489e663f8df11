/* lwip_heap.h: lwIP's heap as size classes (lwip_heap.c says why and what it costs);
 * lwipopts.h routes lwIP's mem_malloc/mem_calloc/mem_free here. The common case, a block of a
 * class up to 2 KiB off its free list and back, is inline in lwIP's mem_malloc and mem_free;
 * the rest is in lwip_heap.c. */
#ifndef NOMNET_LWIP_HEAP_H
#define NOMNET_LWIP_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lazy_region.h"

#define NOMNET_HEAP_FINE_STEP 64u
#define NOMNET_HEAP_FINE_MAX 2048u
#define NOMNET_HEAP_FINE_CLASSES (NOMNET_HEAP_FINE_MAX / NOMNET_HEAP_FINE_STEP)
#define NOMNET_HEAP_CLASSES (NOMNET_HEAP_FINE_CLASSES + 6) /* then 4 KiB ... 128 KiB */
#define NOMNET_HEAP_MAGIC 0x6e6f6d68u                    /* "nomh": a block handed out */
#define NOMNET_HEAP_ARENA_STEP (256u << 10) /* the arena is mapped this much at a time */

/* Each block begins with this; the caller's memory follows, 16-aligned. */
struct nomnet_heap_block {
    uint32_t cls;
    uint32_t magic;
    struct nomnet_heap_block *next; /* on its class's free list; unused while handed out */
};

extern struct nomnet_heap_block *nomnet_heap_lists[NOMNET_HEAP_CLASSES];
extern struct lazy_region nomnet_heap_region; /* the arena: base NULL until the first cut */
extern size_t nomnet_heap_arena_cut;
extern size_t nomnet_heap_in_use;

void *nomnet_heap_malloc_slow(size_t size);
void nomnet_heap_bad_free(void *p) __attribute__((noreturn));
void *nomnet_heap_calloc(size_t count, size_t size);

static inline size_t nomnet_heap_class_size(unsigned cls)
{
    return cls < NOMNET_HEAP_FINE_CLASSES ? (cls + 1) * NOMNET_HEAP_FINE_STEP
                                          : (size_t)1 << (cls - NOMNET_HEAP_FINE_CLASSES + 12);
}

/* The class of a block of n bytes (header included), n at most NOMNET_HEAP_FINE_MAX. */
static inline unsigned nomnet_heap_fine_class(size_t n)
{
    return (unsigned)((n + NOMNET_HEAP_FINE_STEP - 1) / NOMNET_HEAP_FINE_STEP) - 1;
}

static inline void *nomnet_heap_malloc(size_t size)
{
    if (size > NOMNET_HEAP_FINE_MAX - sizeof(struct nomnet_heap_block))
        return nomnet_heap_malloc_slow(size);
    unsigned cls = nomnet_heap_fine_class(size + sizeof(struct nomnet_heap_block));
    struct nomnet_heap_block *b = nomnet_heap_lists[cls];
    if (b == NULL)
        return nomnet_heap_malloc_slow(size);
    nomnet_heap_lists[cls] = b->next;
    b->magic = NOMNET_HEAP_MAGIC;
    nomnet_heap_in_use += (cls + 1) * NOMNET_HEAP_FINE_STEP;
    return b + 1;
}

static inline void nomnet_heap_free(void *p)
{
    if (p == NULL)
        return;
    struct nomnet_heap_block *b = (struct nomnet_heap_block *)p - 1;
    /* A pointer this heap never gave out, or one freed twice, would corrupt a free list. */
    if ((uintptr_t)b - (uintptr_t)nomnet_heap_region.base >= nomnet_heap_arena_cut ||
        b->magic != NOMNET_HEAP_MAGIC || b->cls >= NOMNET_HEAP_CLASSES)
        nomnet_heap_bad_free(p);
    b->magic = 0;
    b->next = nomnet_heap_lists[b->cls];
    nomnet_heap_lists[b->cls] = b;
    nomnet_heap_in_use -= nomnet_heap_class_size(b->cls);
}

/* The physical address of p[0..n) if those bytes lie in the arena's cut part, inside one
 * physically contiguous step (lwip_heap.c); else false. Per transmitted frame, so inline. */
static inline bool nomnet_heap_phys(const void *p, size_t n, uint64_t *phys)
{
    size_t off = (size_t)((uintptr_t)p - (uintptr_t)nomnet_heap_region.base);
    if (nomnet_heap_region.base == NULL || off >= nomnet_heap_arena_cut
        || n > nomnet_heap_arena_cut - off || n == 0
        || off / NOMNET_HEAP_ARENA_STEP != (off + n - 1) / NOMNET_HEAP_ARENA_STEP)
        return false;
    uint64_t base = nomnet_heap_region.step_phys[off / NOMNET_HEAP_ARENA_STEP];
    if (base == 0)
        return false;
    *phys = base + off % NOMNET_HEAP_ARENA_STEP;
    return true;
}

struct nomnet_heap_stats {
    size_t in_use;     /* bytes of blocks handed out (whole blocks, headers included) */
    size_t arena_cut;  /* bytes of the arena cut into blocks (never given back) */
    size_t arena_mapped; /* bytes of it mapped: arena_cut rounded up to a whole step */
    size_t arena_size; /* the arena: lwIP's MEM_SIZE */
    uint64_t borrowed; /* requests served by a larger class's free block */
    uint64_t failed;   /* requests refused: nothing free large enough */
};
void nomnet_heap_get_stats(struct nomnet_heap_stats *out);

#endif
