/* memcpy.c: memcpy for every nom application, in place of newlib's (libnom.a comes first in
 * the link group, libnom/app.mk; memmove.c is its own object so that the two can never both
 * be pulled from different archives).
 *
 * newlib 3.3.0's x86-64 memcpy copies 256 bytes and more with non-temporal stores (movnti)
 * that bypass the cache, 35 instructions per 128 bytes. Here nearly every copy of that size is
 * a packet's payload that is read again at once (by lwIP, the driver, or the application), so
 * bypassing the cache is the wrong bet, and it is also the costlier loop. rep movsq is what
 * Linux's memcpy uses on CPUs with fast strings; the TCG counting plugin counts each of its
 * iterations as one instruction (one per 8 bytes), a hardware counter counts it once. */
#include <stddef.h>
#include <string.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    void *d = dst;
    size_t words = n >> 3, bytes = n & 7;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(words) : : "memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(bytes) : : "memory");
    return dst;
}
