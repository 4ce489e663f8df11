/* proto_http.c: HTTP/1.1 GET requests and response framing (RFC 9112 sections 6.2-6.3:
 * a response without Transfer-Encoding is delimited by Content-Length), keep-alive as wrk. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loadgen.h"

int http_write_request(const char *host, const char *path, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, host);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

/* Finds the end of the header block ("\r\n\r\n"); returns the index after it, or 0. */
static size_t headers_end(const char *buf, size_t len)
{
    for (size_t i = 0; i + 3 < len; i++)
        if (memcmp(buf + i, "\r\n\r\n", 4) == 0)
            return i + 4;
    return 0;
}

/* Value of header `name` (case-insensitive) within the header block, or NULL. */
static const char *header_value(const char *buf, size_t hlen, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i + n + 1 < hlen; i++) {
        if ((i == 0 || buf[i - 1] == '\n') && strncasecmp(buf + i, name, n) == 0
            && buf[i + n] == ':') {
            const char *v = buf + i + n + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

long http_response_length(const char *buf, size_t len, int *status, int *close)
{
    size_t hlen = headers_end(buf, len);
    if (hlen == 0)
        return len > 65536 ? -1 : 0;
    if (sscanf(buf, "HTTP/1.%*d %d", status) != 1)
        return -1;
    const char *cl = header_value(buf, hlen, "Content-Length");
    if (!cl || !isdigit((unsigned char)*cl))
        return -1;
    const char *conn = header_value(buf, hlen, "Connection");
    *close = conn && strncasecmp(conn, "close", 5) == 0;
    size_t body = strtoul(cl, NULL, 10);
    return len >= hlen + body ? (long)(hlen + body) : 0;
}
