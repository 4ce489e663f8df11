/* word.h: eight bytes at a time for libnom's string functions (memchr.c, memcmp.c, strlen.c).
 * newlib 3.3.0's generic C versions of these go a byte at a time for short strings and until
 * both pointers align, about 3-5 instructions a byte: memchr, memcmp and strlen were 190-420
 * instructions of each nhttpd and memcached request (issue 16, tools/bench/per_request.py). */
#ifndef LIBNOM_WORD_H
#define LIBNOM_WORD_H

#include <stdint.h>

#define WORD_ONES 0x0101010101010101ull
#define WORD_HIGHS 0x8080808080808080ull

/* A possibly unaligned 8-byte load (x86-64 allows them; one instruction). */
static inline uint64_t word_load(const void *p)
{
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    return w;
}

/* Non-zero iff some byte of w is zero; then its lowest set bit is in the first (lowest
 * addressed) zero byte: a borrow only runs upward, past a zero byte, so bytes below the first
 * zero byte never show a false one. */
static inline uint64_t word_zero_bytes(uint64_t w) { return (w - WORD_ONES) & ~w & WORD_HIGHS; }

/* The index (0-7) of the byte a word_zero_bytes result (non-zero) points at. */
static inline unsigned word_first_byte(uint64_t z) { return (unsigned)__builtin_ctzll(z) >> 3; }

/* Keeps gcc from turning the byte loops into calls of the functions they implement. */
#define NO_LOOP_TO_LIBCALL __attribute__((optimize("-fno-tree-loop-distribute-patterns")))

#endif
