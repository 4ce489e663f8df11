/* string.c: the few C library routines the freestanding kernel needs (gcc may call mem*). */
#include "defs.h"

/* memset and memcpy move eight bytes an iteration, then the rest a byte at a time. Under TCG
 * every iteration of a rep string instruction is emulated (and counted by the instruction
 * plugin) on its own: with rep stosb, zeroing an application's 26 MB of bss at load took most
 * of the 0.1-0.15 s between the bulletin board and "app started" (issue 16's boot time). On
 * hardware with fast strings either form runs at the same speed. */
void *memset(void *dst, int c, size_t n) {
    void *ret = dst;
    uint64_t pattern = 0x0101010101010101ull * (unsigned char)c;
    size_t words = n >> 3, bytes = n & 7;
    __asm__ volatile("rep stosq" : "+D"(dst), "+c"(words) : "a"(pattern) : "memory");
    __asm__ volatile("rep stosb" : "+D"(dst), "+c"(bytes) : "a"(pattern) : "memory");
    return ret;
}

void *memcpy(void *dst, const void *src, size_t n) {
    void *ret = dst;
    size_t words = n >> 3, bytes = n & 7;
    __asm__ volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(words) : : "memory");
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(bytes) : : "memory");
    return ret;
}

void *memmove(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d <= s || d >= s + n)
        return memcpy(dst, src, n);
    while (n--)
        d[n] = s[n];
    return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] - y[i];
    return 0;
}

size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

size_t strnlen(const char *s, size_t max) {
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

int strncmp(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i] || !a[i])
            return (unsigned char)a[i] - (unsigned char)b[i];
    }
    return 0;
}

/* Copies at most size-1 bytes and always terminates. */
char *strncpy0(char *dst, const char *src, size_t size) {
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
    return dst;
}

/* Decimal or 0x-prefixed hexadecimal. */
uint64_t parse_u64(const char *s, const char **end) {
    uint64_t v = 0;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    for (;; s++) {
        int d;
        if (*s >= '0' && *s <= '9') d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
        else break;
        v = v * base + d;
    }
    if (end)
        *end = s;
    return v;
}
