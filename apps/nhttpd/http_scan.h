/*
 * http_scan.h: the parser's byte-class scans, eight bytes at a time (http.c).
 *
 * Why: a request's bytes went through per-byte loops two or three times (the request-target,
 * every field value, the path normalizer), about 700 of nhttpd's 8.3K instructions per request
 * under issue 16's profile. A word whose eight bytes are all ordinary is passed with a few
 * instructions; a word holding anything else is looked at byte by byte, by the same per-byte
 * test as before, so the answers are the per-byte loop's exactly.
 *
 * The word tests are the classic exact yes/no forms (Hacker's Delight 6-1, "hasless" and
 * "hasmore"): which byte matched is not trusted, only whether one did. Loads go through
 * memcpy (no alignment or aliasing assumption) and never read outside s[0..n). libnom's
 * word.h does the same for libnom's string functions; nhttpd also builds for Linux, so it
 * keeps its own.
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

/* Request-target bytes: visible ASCII (RFC 9112 3.2 builds every form from them). */
static inline bool is_target_char(unsigned char c) { return c > 0x20 && c < 0x7f; }

/* RFC 9110 5.5: field-vchar, SP, HTAB, obs-text. CR, LF, NUL and other controls are not. */
static inline bool is_field_char(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

/* How many bytes from the start of s[0..n) are target chars. */
static inline size_t span_target_chars(const char *s, size_t n)
{
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t w = scan_load8(s + i);
        if (scan_any_below(w, 0x21) | scan_any_above(w, 0x7e))
            break;
        i += 8;
    }
    if (i < n && i + 8 > n && n >= 8) { /* the tail, as the last eight bytes */
        uint64_t w = scan_load8(s + n - 8);
        if (!(scan_any_below(w, 0x21) | scan_any_above(w, 0x7e)))
            return n;
    }
    while (i < n && is_target_char((unsigned char)s[i]))
        i++;
    return i;
}

/* Whether every byte of s[0..n) is a field char. Words with a byte below 0x20 (a tab among
 * them) or 0x7f are judged byte by byte; a tail shorter than a word is read as the last eight
 * bytes, overlapping what was judged already. */
static inline bool all_field_chars(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t at = i + 8 <= n ? i : (n >= 8 ? n - 8 : i);
        if (at + 8 <= n) {
            uint64_t w = scan_load8(s + at);
            if (!(scan_any_below(w, 0x20) | scan_any_equal(w, 0x7f))) {
                i = at + 8;
                continue;
            }
        }
        size_t end = at + 8 < n ? at + 8 : n;
        for (size_t k = at; k < end; k++)
            if (!is_field_char((unsigned char)s[k]))
                return false;
        i = end;
    }
    return true;
}

#endif /* NHTTPD_HTTP_SCAN_H */
