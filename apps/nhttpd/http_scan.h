/*
 * http_scan.h: the parser's byte-class scans, eight bytes at a time (http.c).
 *
 * Why: a request's bytes went through per-byte loops two or three times (the request-target,
 * every field value, the path normalizer), about 700 of nhttpd's 8.3K instructions per request
 * under issue 16's profile. A word whose eight bytes are all ordinary is passed with a few
 * instructions; in a word holding anything else, the first such byte is found exactly
 * (scan_first), so the answers are the per-byte loop's, which still judges what is left when
 * fewer than eight bytes are.
 *
 * The word tests are the classic exact yes/no forms (Hacker's Delight 6-1, "hasless" and
 * "hasmore"). Of the bytes they flag, only the lowest is sure to match: a borrow or carry runs
 * upward from a byte that matched and may flag the bytes above it, but never one below, so
 * scan_first names the first matching byte exactly and the rest are not trusted. Loads go
 * through memcpy (no alignment or aliasing assumption) and never read outside s[0..n). libnom's
 * word.h does the same for libnom's string functions; nhttpd also builds for Linux, so it keeps
 * its own.
 */
#ifndef NHTTPD_HTTP_SCAN_H
#define NHTTPD_HTTP_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCAN_ONES  0x0101010101010101ull
#define SCAN_HIGHS 0x8080808080808080ull

static inline uint64_t scan_load8(const char *p)
{
    uint64_t w;
    __builtin_memcpy(&w, p, 8);
    return w;
}

/* Nonzero iff some byte of w is below b (b <= 128). */
static inline uint64_t scan_any_below(uint64_t w, unsigned b)
{
    return (w - SCAN_ONES * b) & ~w & SCAN_HIGHS;
}

/* Nonzero iff some byte of w is above b (b <= 127). */
static inline uint64_t scan_any_above(uint64_t w, unsigned b)
{
    return ((w + SCAN_ONES * (127 - b)) | w) & SCAN_HIGHS;
}

/* Nonzero iff some byte of w is c. */
static inline uint64_t scan_any_equal(uint64_t w, unsigned char c)
{
    return scan_any_below(w ^ (SCAN_ONES * c), 1);
}

/* Offset of the first byte a nonzero word test flagged (the lowest flag is exact, see above). */
static inline size_t scan_first(uint64_t hit)
{
    return (size_t)__builtin_ctzll(hit) >> 3;
}

/* Request-target bytes: visible ASCII (RFC 9112 3.2 builds every form from them). */
static inline bool is_target_char(unsigned char c) { return c > 0x20 && c < 0x7f; }

/* RFC 9110 5.5: field-vchar, SP, HTAB, obs-text. CR, LF, NUL and other controls are not. */
static inline bool is_field_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

/* Flags the bytes of w that are not target chars. */
static inline uint64_t scan_non_target(uint64_t w)
{
    return scan_any_below(w, 0x21) | scan_any_above(w, 0x7e);
}

/* How many bytes from the start of s[0..n) are target chars. A tail shorter than a word is read
 * as the last eight bytes: those before i passed, so they flag nothing and the first flag is
 * the tail's. */
static inline size_t span_target_chars(const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t hit = scan_non_target(scan_load8(s + i));
        if (hit != 0)
            return i + scan_first(hit);
    }
    if (i < n && n >= 8) {
        uint64_t hit = scan_non_target(scan_load8(s + n - 8));
        return hit != 0 ? n - 8 + scan_first(hit) : n;
    }
    while (i < n && is_target_char((unsigned char)s[i]))
        i++;
    return i;
}

/* How many bytes from the start of s[0..n) are field chars. The word test flags tabs too
 * (below 0x20), so a tab is stepped over and the scan goes on from the byte after it; a tail
 * shorter than a word is judged byte by byte. */
static inline size_t span_field_chars(const char *s, size_t n)
{
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t w = scan_load8(s + i), hit = scan_any_below(w, 0x20) | scan_any_equal(w, 0x7f);
        if (hit == 0) {
            i += 8;
            continue;
        }
        i += scan_first(hit);
        if (s[i] != '\t')
            return i;
        i++;
    }
    while (i < n && is_field_char((unsigned char)s[i]))
        i++;
    return i;
}

#endif /* NHTTPD_HTTP_SCAN_H */
