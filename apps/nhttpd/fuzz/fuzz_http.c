/* fuzz_http.c: libFuzzer harness of nhttpd's request parser (http.h) and path normalizer.
 * The input is the bytes a client sent. The first byte picks where the bytes are split into
 * two reads, so the resumed scan (the `scanned` hint) is fuzzed too, and the harness checks
 * what the contract promises: a split never changes the verdict of a complete head, a DONE
 * request points inside the buffer, within the limits, and its path normalizes into the
 * room given or is refused with -400. Any violation aborts (a libFuzzer crash). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "http.h"

static bool is_verdict(int r)
{
    return r == HTTP_PARSE_DONE || r == HTTP_PARSE_MORE || r == 400 || r == 414 || r == 431
           || r == 501 || r == 505;
}

static void check_done(const char *buf, size_t len, const struct http_request *req)
{
    EXPECT(req->head_len > 0 && req->head_len <= len && req->head_len <= HTTP_MAX_HEAD);
    EXPECT(req->target >= buf && req->target + req->target_len <= buf + req->head_len);
    EXPECT(req->target_len > 0 && req->target_len <= HTTP_MAX_TARGET);
    EXPECT(req->version_minor == 0 || req->version_minor == 1);
    EXPECT(req->method >= HTTP_GET && req->method <= HTTP_UNKNOWN);

    char path[256];
    int n = http_normalize_path(req->target, req->target_len, path, sizeof path);
    EXPECT(n == -400 || (n > 0 && (size_t)n < sizeof path && path[0] == '/'));
    if (n > 0) {
        EXPECT(memchr(path, '\0', (size_t)n) == NULL);
        for (int i = 0; i + 1 < n; i++)
            EXPECT(!(path[i] == '/' && path[i + 1] == '/'));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    /* An exact-size copy, so a read past the client's bytes is an ASan report. */
    char *buf = malloc(len ? len : 1);
    memcpy(buf, data + 1, len);
    size_t split = len ? data[0] % (len + 1) : 0;

    struct http_request whole, part;
    size_t scanned = 0;
    int r = http_parse(buf, len, &scanned, &whole);
    EXPECT(is_verdict(r));
    if (r == HTTP_PARSE_DONE)
        check_done(buf, len, &whole);
    if (r == HTTP_PARSE_MORE)
        EXPECT(len < HTTP_MAX_HEAD);

    /* The same bytes in two reads, the hint kept between them. */
    scanned = 0;
    int first = http_parse(buf, split, &scanned, &part);
    EXPECT(is_verdict(first));
    EXPECT(scanned <= split);
    if (first == HTTP_PARSE_MORE) {
        int second = http_parse(buf, len, &scanned, &part);
        EXPECT(second == r);
        if (r == HTTP_PARSE_DONE)
            EXPECT(part.head_len == whole.head_len && part.target == whole.target
                   && part.target_len == whole.target_len && part.method == whole.method
                   && part.keep_alive == whole.keep_alive
                   && part.content_length == whole.content_length);
    } else if (first == HTTP_PARSE_DONE) {
        /* A head complete in the first read is the same head in all the bytes. */
        EXPECT(r == HTTP_PARSE_DONE && part.head_len == whole.head_len);
    } else {
        /* A prefix already refused stays refused. */
        EXPECT(r != HTTP_PARSE_DONE && r != HTTP_PARSE_MORE);
    }

    /* The normalizer on the raw bytes too: a target the parser never saw. */
    char path[64];
    int n = http_normalize_path(buf, len, path, sizeof path);
    EXPECT(n == -400 || (n > 0 && (size_t)n < sizeof path && path[0] == '/'));

    free(buf);
    return 0;
}
