/* memmove.c: memmove for every nom application, in place of newlib's (libnom.a comes first in
 * the link group, libnom/app.mk). newlib 3.3.0's generic memmove copies a byte at a time
 * whenever source and destination are not both 8-byte aligned, and always when they overlap:
 * memcached's copy of a SET's value from its read buffer into the item (never aligned alike)
 * ran at about 5 instructions a byte, 800 of the 14K per request of issue 16's mix
 * (tools/bench/per_request.py). Disjoint copies go to memcpy (memcpy.c); overlapping ones
 * move 8 bytes at a time, x86-64 loads and stores being fine unaligned. */
#include <stdint.h>
#include <string.h>

#include "word.h"

static inline void store8(unsigned char *p, uint64_t w) { __builtin_memcpy(p, &w, 8); }

NO_LOOP_TO_LIBCALL void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    uintptr_t da = (uintptr_t)d, sa = (uintptr_t)s;
    if (da == sa || n == 0)
        return dst;
    if (da + n <= sa || sa + n <= da)
        return memcpy(dst, src, n);
    if (da < sa) {
        /* Forward: a word is loaded before its store, which lands below every byte still
         * to be read (d < s). */
        for (; n >= 8; n -= 8, d += 8, s += 8)
            store8(d, word_load(s));
        while (n--)
            *d++ = *s++;
    } else {
        /* Backward from the ends, the mirror case (d > s). */
        d += n;
        s += n;
        for (; n >= 8; n -= 8) {
            d -= 8;
            s -= 8;
            store8(d, word_load(s));
        }
        while (n--)
            *--d = *--s;
    }
    return dst;
}
