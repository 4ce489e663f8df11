/* lazy_region.h: address space reserved at once and made memory a step at a time, as it is
 * used (lwip_heap.c's arena, lwip_memp.c's pools). Why: the kernel zeroes an application's
 * whole .bss at load, so a static array sized for the worst case is paid for at every boot,
 * used or not (issue 16; results/boot-time-2026-11-29-lazy-arena). Reserved with
 * mmap(PROT_NONE), opened with mprotect (libnom: a reserved page costs no frame until then). */
#ifndef NOMNET_LAZY_REGION_H
#define NOMNET_LAZY_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lazy_region {
    uint8_t *base; /* NULL until the first lazy_region_open */
    size_t size;   /* bytes of address space to reserve */
    size_t step;   /* opened this much at a time (a multiple of the page) */
    size_t mapped; /* bytes from base that are memory: what was asked, rounded up a step */
    /* Optional, size / step entries: each step opened physically contiguous (nom_dma_open)
     * gets its physical address here, one that could not be gets 0 (opened page by page). */
    uint64_t *step_phys;
};

/* Makes the region's first `need` bytes memory: reserves the region on the first call, then
 * opens whole steps (the last one ends at size). False when need > size or the system
 * refuses (no memory left, or over the application's limit); nothing changes then. */
bool lazy_region_open(struct lazy_region *r, size_t need);

#endif
