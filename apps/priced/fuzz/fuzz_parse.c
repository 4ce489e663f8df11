/* fuzz_parse.c: libFuzzer harness of priced's parsers of what the price provider sends. The
 * first input byte picks the parser, the rest is the provider's bytes:
 *   0  price.txt (nom_price_text_parse), with a limit taken from the next byte; a parsed price
 *      is checked against the limit and round-tripped through nom_price_format and
 *      nom_price_parse_micro;
 *   1  an HTTP response, fed in reads whose sizes come from the next bytes, then end of file;
 *      the verdict and the body must be those of the same bytes in one read;
 *   2  a provider URL (http_url_parse).
 * Any broken promise of nom/price.h or http_client.h aborts (a libFuzzer crash). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/price.h>

#include "expect.h"
#include "http_client.h"

static void check_why(const char *why, size_t whylen)
{
    EXPECT(memchr(why, '\0', whylen) != NULL);
}

static void fuzz_price_text(const uint8_t *d, size_t n)
{
    if (n < 1)
        return;
    static const int64_t limits[] = { 0, 1, 1000000, 1000000000000ll, INT64_MAX / 2, INT64_MAX };
    int64_t max = limits[d[0] % (sizeof limits / sizeof limits[0])];
    char *text = malloc(n - 1 ? n - 1 : 1); /* exact size: a read past it is an ASan report */
    memcpy(text, d + 1, n - 1);
    struct nom_price_quote q;
    char why[96];
    memset(why, 'x', sizeof why);
    int r = nom_price_text_parse(text, n - 1, max, &q, why, sizeof why);
    EXPECT(r == 0 || r == -1);
    if (r == 0) {
        EXPECT(q.price_micro >= 0 && q.price_micro <= max);
        char buf[32];
        int64_t back = -1;
        nom_price_format(q.price_micro, buf, sizeof buf);
        EXPECT(nom_price_parse_micro(buf, strlen(buf), max, &back) == 0 && back == q.price_micro);
    } else {
        check_why(why, sizeof why);
    }
    int64_t v;
    if (nom_price_parse_micro(text, n - 1, max, &v) == 0)
        EXPECT(v >= 0 && v <= max);
    free(text);
}

/* Feeds data[0, n) as http_get does: in reads of the sizes given by cuts (none: all at once),
 * stopping at the first verdict, then EOF. *unread: bytes never fed (the client stops reading
 * at a verdict). */
static int feed(struct http_response *r, const char *data, size_t n, const uint8_t *cuts,
                size_t ncuts, size_t *unread)
{
    size_t off = 0, c = 0;
    http_response_init(r);
    while (off < n) {
        size_t step = c < ncuts ? (size_t)cuts[c++] % 64 + 1 : n - off;
        if (step > n - off)
            step = n - off;
        int v = http_response_feed(r, data + off, step);
        off += step;
        if (v != HTTP_MORE) {
            *unread = n - off;
            return v;
        }
    }
    *unread = 0;
    return http_response_eof(r);
}

static void check_response(const struct http_response *r, int v)
{
    EXPECT(v == HTTP_DONE || v == HTTP_ERROR);
    if (v == HTTP_ERROR) {
        EXPECT(r->error != NULL && memchr(r->error, '\0', 200) != NULL);
        return;
    }
    EXPECT(r->status >= 100 && r->status <= 599);
    EXPECT(memchr(r->reason, '\0', sizeof r->reason) != NULL);
    EXPECT(r->body_len <= HTTP_MAX_BODY && r->body[r->body_len] == '\0');
    if (r->status == 200 && r->content_length >= 0)
        EXPECT((int64_t)r->body_len == r->content_length);
}

static void fuzz_http_response(const uint8_t *d, size_t n)
{
    if (n < 1)
        return;
    size_t ncuts = d[0] % 16;
    if (ncuts > n - 1)
        ncuts = n - 1;
    const uint8_t *cuts = d + 1;
    size_t len = n - 1 - ncuts;
    char *data = malloc(len ? len : 1);
    memcpy(data, d + 1 + ncuts, len);
    static struct http_response whole, pieces;
    size_t unread_whole, unread_pieces;
    int a = feed(&whole, data, len, NULL, 0, &unread_whole);
    int b = feed(&pieces, data, len, cuts, ncuts, &unread_pieces);
    check_response(&whole, a);
    check_response(&pieces, b);
    /* Where a read ends must not change the verdict of a complete response, except that bytes
     * after a complete body are refused only if they come in the same read (else unread). */
    if (a == HTTP_DONE && b == HTTP_DONE)
        EXPECT(whole.status == pieces.status && whole.body_len == pieces.body_len
               && memcmp(whole.body, pieces.body, whole.body_len) == 0);
    else if (a == HTTP_DONE || b == HTTP_DONE)
        EXPECT(strcmp((a == HTTP_DONE ? &pieces : &whole)->error,
                      "bytes after the end of the body") == 0
               && (a == HTTP_DONE ? unread_whole : unread_pieces) > 0);
    free(data);
}

static void fuzz_url(const uint8_t *d, size_t n)
{
    char *url = malloc(n + 1);
    memcpy(url, d, n);
    url[n] = '\0';
    struct http_url u;
    char why[96];
    if (http_url_parse(url, &u, why, sizeof why) == 0) {
        EXPECT(u.path[0] == '/' && memchr(u.path, '\0', sizeof u.path) != NULL);
        EXPECT(memchr(u.host, '\0', sizeof u.host) != NULL && u.port != 0);
    } else {
        check_why(why, sizeof why);
    }
    free(url);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 3) {
    case 0: fuzz_price_text(data + 1, size - 1); break;
    case 1: fuzz_http_response(data + 1, size - 1); break;
    default: fuzz_url(data + 1, size - 1); break;
    }
    return 0;
}
