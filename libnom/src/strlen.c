/* strlen.c: strlen for every nom application, in place of newlib's (word.h says why). Bytes
 * up to an 8-byte boundary one at a time, then aligned words until one holds the NUL: an
 * aligned word never crosses a page, so reading past the NUL within it cannot fault. */
#include <stddef.h>
#include <string.h>

#include "word.h"

NO_LOOP_TO_LIBCALL size_t strlen(const char *s)
{
    const char *p = s;
    for (; (uintptr_t)p & 7; p++)
        if (*p == '\0')
            return (size_t)(p - s);
    for (;; p += 8) {
        uint64_t z = word_zero_bytes(word_load(p));
        if (z)
            return (size_t)(p - s) + word_first_byte(z);
    }
}
