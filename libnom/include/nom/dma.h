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
/* Physical address of a mapped virtual address (any mapping of the caller); 0 if unmapped
 * (physical page 0 is never an application's): callers must check before giving it to a
 * device. */
uint64_t nom_virt_to_phys(const void *p);

#endif /* NOM_DMA_H */
