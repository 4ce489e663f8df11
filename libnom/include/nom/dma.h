/*
 * nom/dma.h: memory for device DMA in trusted mode (paper 3.5: the kernel tells the
 * application the physical address of its pages; the device then reads and writes them).
 *
 * Contract: nom_dma_alloc returns page-aligned, zeroed, physically contiguous memory
 * (NOM_SYS_MEM_MAP with NOM_MAP_CONTIG) mapped read/write in a region of the address space
 * reserved for DMA, so it never moves and is never reused while allocated. Allocation and
 * freeing take the DMA lock (a user-thread mutex): call from thread context, not from an
 * upcall or an idle hook.
 */
#ifndef NOM_DMA_H
#define NOM_DMA_H

#include <stddef.h>
#include <stdint.h>

/* bytes rounded up to pages; *phys (if not NULL) gets the first byte's physical address.
 * NULL with errno ENOMEM (no contiguous memory or DMA region full) or EINVAL (bytes == 0). */
void *nom_dma_alloc(size_t bytes, uint64_t *phys);
/* Frees a block from nom_dma_alloc with the same bytes. */
void nom_dma_free(void *p, size_t bytes);
/* Makes [va, va + bytes) of a reservation of the caller's (mmap with PROT_NONE, nothing of it
 * opened yet) physically contiguous, zeroed, read/write memory, and gives its first byte's
 * physical address in *phys: a region that grows a step at a time and whose steps a device may
 * read (net/'s lwIP heap, for zero-copy transmit). No lock: callable from any context. 0, or
 * -EINVAL (va or bytes not whole pages, outside mmap's region) or -ENOMEM (no contiguous
 * memory: the range stays reserved, unopened; mprotect() can still open it page by page). */
int nom_dma_open(void *va, size_t bytes, uint64_t *phys);
/* Physical address of a mapped virtual address (any mapping of the caller); 0 if unmapped
 * (physical page 0 is never an application's): callers must check before giving it to a
 * device. */
uint64_t nom_virt_to_phys(const void *p);

#endif /* NOM_DMA_H */
