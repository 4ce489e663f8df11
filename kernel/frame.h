/* frame.h: the physical frame allocator's interface (also compiled into host unit tests). */
#ifndef NOM_FRAME_H
#define NOM_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#define FRAME_SIZE 4096ull
#define FRAME_MAX ((16ull << 30) / FRAME_SIZE) /* frames above 16 GiB are not used */

void frame_init(uint64_t max_phys);
void frame_free_range(uint64_t start, uint64_t end);
void frame_reserve_range(uint64_t start, uint64_t end);
uint64_t frame_alloc(void);              /* zeroed; 0 if none */
uint64_t frame_alloc_contig(uint64_t n); /* zeroed, physically contiguous; 0 if none */
void frame_free(uint64_t pa);            /* frame_bug() on a frame that is not allocated */
void frame_free_contig(uint64_t pa, uint64_t n);
uint64_t frame_count_free(void);
uint64_t frame_count_total(void);

/* Provided by the user of the allocator (vm.c in the kernel, the test harness on the host). */
void frame_zero(uint64_t pa, uint64_t n);
_Noreturn void frame_bug(const char *what, uint64_t pa);

#endif
