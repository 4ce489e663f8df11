/* lwip_heap.h: lwIP's heap as size classes (lwip_heap.c says why and what it costs);
 * lwipopts.h routes lwIP's mem_malloc/mem_calloc/mem_free here. */
#ifndef NOMNET_LWIP_HEAP_H
#define NOMNET_LWIP_HEAP_H

#include <stddef.h>
#include <stdint.h>

void *nomnet_heap_malloc(size_t size);
void *nomnet_heap_calloc(size_t count, size_t size);
void nomnet_heap_free(void *p);

struct nomnet_heap_stats {
    size_t in_use;     /* bytes of blocks handed out (whole blocks, headers included) */
    size_t peak;       /* the most in_use has been */
    size_t arena_cut;  /* bytes of the arena cut into blocks (never given back) */
    size_t arena_size; /* the arena: lwIP's MEM_SIZE */
    uint64_t borrowed; /* requests served by a larger class's free block */
    uint64_t failed;   /* requests refused: nothing free large enough */
};
void nomnet_heap_get_stats(struct nomnet_heap_stats *out);

#endif
