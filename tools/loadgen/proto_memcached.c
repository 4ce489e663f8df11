/* proto_memcached.c: requests and reply framing of memcached's text protocol (GET and SET),
 * as memaslap sends them: a GET/SET mix over a fixed key space (paper section 6). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen.h"

/* The value bytes: any fixed printable filler; memcached does not look at them. */
static void fill_value(char *dst, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        dst[i] = (char)('a' + i % 26);
}

int mc_write_set(const struct mc_config *c, unsigned k, char *buf, size_t cap)
{
    int h = snprintf(buf, cap, "set nomkey:%08u 0 0 %u\r\n", k, c->value_size);
    if (h < 0 || (size_t)h + c->value_size + 2 > cap)
        return -1;
    fill_value(buf + h, c->value_size);
    memcpy(buf + h + c->value_size, "\r\n", 2);
    return h + (int)c->value_size + 2;
}

int mc_write_request(const struct mc_config *c, uint64_t *rng, char *buf, size_t cap)
{
    uint64_t r = rng_next(rng);
    unsigned k = (unsigned)(r >> 32) % c->keys;
    if ((unsigned)(r % 1000) < c->get_permille) {
        int n = snprintf(buf, cap, "get nomkey:%08u\r\n", k);
        return n < 0 || (size_t)n >= cap ? -1 : n;
    }
    return mc_write_set(c, k, buf, cap);
}

/* Index just past the first "\r\n" in buf[0..len), or 0 if there is none. */
static size_t line_end(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n')
            return i + 2;
    return 0;
}

static int starts(const char *buf, size_t len, const char *word)
{
    size_t n = strlen(word);
    return len >= n && memcmp(buf, word, n) == 0;
}

/* "VALUE key flags bytes\r\n" DATA "\r\n" ... "END\r\n" */
static long value_reply_length(const char *buf, size_t len, size_t header)
{
    char line[256];
    size_t n = header < sizeof line ? header : sizeof line - 1;
    memcpy(line, buf, n);
    line[n] = '\0';
    char key[251];
    unsigned flags;
    unsigned long bytes;
    if (sscanf(line, "VALUE %250s %u %lu", key, &flags, &bytes) != 3)
        return -1;
    size_t total = header + bytes + 2;
    if (len < total + 5)
        return 0;
    if (memcmp(buf + header + bytes, "\r\n", 2) != 0 || !starts(buf + total, len - total, "END\r\n"))
        return -1;
    return (long)(total + 5);
}

long mc_response_length(const char *buf, size_t len, int *hit)
{
    size_t header = line_end(buf, len);
    *hit = 0;
    if (header == 0)
        return len > 1024 ? -1 : 0;
    if (starts(buf, len, "END\r\n") || starts(buf, len, "STORED\r\n"))
        return (long)header;
    if (starts(buf, len, "VALUE ")) {
        *hit = 1;
        return value_reply_length(buf, len, header);
    }
    return -1;
}
