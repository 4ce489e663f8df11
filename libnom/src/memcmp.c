/* memcmp.c: memcmp for every nom application, in place of newlib's (word.h says why). Eight
 * bytes at a time, unaligned, never past either end; at the first word that differs, its
 * first differing byte decides, as the standard orders them (as unsigned char). */
#include <stddef.h>
#include <string.h>

#include "word.h"

NO_LOOP_TO_LIBCALL int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    for (; n >= 8; p += 8, q += 8, n -= 8) {
        uint64_t diff = word_load(p) ^ word_load(q);
        if (diff) {
            unsigned i = (unsigned)__builtin_ctzll(diff) >> 3;
            return (int)p[i] - (int)q[i];
        }
    }
    for (; n > 0; p++, q++, n--)
        if (*p != *q)
            return (int)*p - (int)*q;
    return 0;
}
