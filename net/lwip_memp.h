/* lwip_memp.h: what lwip_memp.c (lwIP's pools, opened as used) tells beyond lwIP's own
 * statistics: how much of a pool has been cut and how much memory it has mapped. */
#ifndef NOMNET_LWIP_MEMP_H
#define NOMNET_LWIP_MEMP_H

#include <stddef.h>
#include <stdint.h>

#include "lwip/memp.h"

struct nomnet_memp_stats {
    unsigned cut;          /* elements cut so far (in use or on the free list), <= num */
    unsigned num;          /* the pool's bound: lwipopts.h's MEMP_NUM_x, PBUF_POOL_SIZE */
    unsigned element_size; /* bytes, aligned */
    size_t mapped;         /* bytes of the pool's region that are memory */
    size_t reserved;       /* bytes of address space: num elements */
};

void nomnet_memp_get_stats(memp_t type, struct nomnet_memp_stats *out);

#endif
