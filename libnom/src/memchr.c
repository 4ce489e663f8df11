/* memchr.c: memchr for every nom application, in place of newlib's (word.h says why). Eight
 * bytes at a time, then the last few one at a time. C11 7.24.5.1 lets a caller pass an n
 * larger than the object when the byte occurs in it, so nothing past the first match may be
 * read that could fault: bytes go one at a time up to an 8-byte boundary, and an aligned
 * word never crosses a page. */
#include <stddef.h>
#include <string.h>

#include "word.h"

NO_LOOP_TO_LIBCALL void *memchr(const void *s, int c, size_t n)
{
    const unsigned char *p = s, ch = (unsigned char)c;
    for (; n > 0 && ((uintptr_t)p & 7); p++, n--)
        if (*p == ch)
            return (void *)p;
    uint64_t pattern = WORD_ONES * ch;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t z = word_zero_bytes(word_load(p) ^ pattern);
        if (z)
            return (void *)(p + word_first_byte(z));
    }
    for (; n > 0; p++, n--)
        if (*p == ch)
            return (void *)p;
    return NULL;
}
