/* seqlock.h: the bulletin board's seqlock, writer and reader halves (one writer: the kernel,
 * under its lock). The generation is odd while a write is in progress; a reader copies, then
 * retries if the generation was odd or moved. Also compiled into host tests. */
#ifndef NOM_SEQLOCK_H
#define NOM_SEQLOCK_H

#include <stdint.h>

static inline void seqlock_write_begin(volatile uint64_t *gen) {
    __atomic_store_n(gen, *gen + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void seqlock_write_end(volatile uint64_t *gen) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(gen, *gen + 1, __ATOMIC_RELEASE);
}

static inline uint64_t seqlock_read_begin(const volatile uint64_t *gen) {
    uint64_t g = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return g;
}

/* Non-zero: the copy made since seqlock_read_begin returned g may be torn; copy again. */
static inline int seqlock_read_retry(const volatile uint64_t *gen, uint64_t g) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return (g & 1) || __atomic_load_n(gen, __ATOMIC_RELAXED) != g;
}

#endif
