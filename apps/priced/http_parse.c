/* http_parse.c: the pure half of priced's HTTP client (http_client.h): the URL and the
 * response parser, fed bytes as they arrive. No I/O here, so the host unit tests cover it. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http_client.h"

/* ---- URL ---------------------------------------------------------------------------- */

/* A decimal number of at most max_digits in [0, max] at *s, advancing *s; -1 if none. */
static long parse_decimal(const char **s, int max_digits, long max)
{
    long v = 0;
    int digits = 0;
    while (**s >= '0' && **s <= '9') {
        if (++digits > max_digits)
            return -1;
        v = v * 10 + (**s - '0');
        (*s)++;
    }
    return digits == 0 || v > max ? -1 : v;
}

/* A dotted quad in network byte order (on x86, little-endian: first octet lowest). */
static int parse_ipv4(const char **s, uint32_t *ip)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (i > 0 && *(*s)++ != '.')
            return -1;
        long octet = parse_decimal(s, 3, 255);
        if (octet < 0)
            return -1;
        v |= (uint32_t)octet << (8 * i);
    }
    *ip = v;
    return 0;
}

static int url_fail(char *why, size_t whylen, const char *reason)
{
    snprintf(why, whylen, "%s", reason);
    return -1;
}

int http_url_parse(const char *url, struct http_url *out, char *why, size_t whylen)
{
    const char *s = url;
    long port = 80;
    memset(out, 0, sizeof *out);
    if (strncasecmp(s, "http://", 7) != 0)
        return url_fail(why, whylen, "only http:// URLs are supported");
    s += 7;
    if (parse_ipv4(&s, &out->ip) != 0)
        return url_fail(why, whylen, "the host must be a numeric IPv4 address (no DNS on nom)");
    if (*s == ':') {
        s++;
        port = parse_decimal(&s, 5, 65535);
        if (port <= 0)
            return url_fail(why, whylen, "the port must be a number in 1-65535");
    }
    if (*s != '/' && *s != '\0')
        return url_fail(why, whylen, "junk after the host (expected :PORT or /PATH)");
    const char *path = *s ? s : "/";
    if (strlen(path) >= sizeof out->path)
        return url_fail(why, whylen, "the path is too long");
    for (const char *p = path; *p; p++)
        if (*p <= ' ' || *p > '~' || *p == '#')
            return url_fail(why, whylen, "the path has a space, control character or '#'");
    strcpy(out->path, path);
    out->port = (uint16_t)port;
    const unsigned char *o = (const unsigned char *)&out->ip;
    snprintf(out->host, sizeof out->host, "%u.%u.%u.%u:%u", o[0], o[1], o[2], o[3],
             out->port);
    return 0;
}

/* ---- Response ------------------------------------------------------------------------- */

void http_response_init(struct http_response *r)
{
    memset(r, 0, sizeof *r);
    r->content_length = -1;
}

static int fail(struct http_response *r, const char *error)
{
    r->error = error;
    return HTTP_ERROR;
}

/* RFC 9110 5.6.2 tchar. */
static int is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* RFC 9112 4: HTTP-version SP 3DIGIT SP reason-phrase (we also take a missing reason). */
static int parse_status_line(struct http_response *r, const char *line, size_t len)
{
    if (len < 12 || (strncmp(line, "HTTP/1.1 ", 9) != 0 && strncmp(line, "HTTP/1.0 ", 9) != 0))
        return fail(r, "the status line is not 'HTTP/1.x NNN reason'");
    const char *d = line + 9;
    if (d[0] < '1' || d[0] > '5' || d[1] < '0' || d[1] > '9' || d[2] < '0' || d[2] > '9')
        return fail(r, "the status code is not three digits 100-599");
    if (len > 12 && d[3] != ' ')
        return fail(r, "no space after the status code");
    r->status = (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
    size_t rlen = len > 13 ? len - 13 : 0;
    if (rlen >= sizeof r->reason)
        rlen = sizeof r->reason - 1;
    if (rlen)
        memcpy(r->reason, line + 13, rlen);
    r->reason[rlen] = '\0';
    return HTTP_MORE;
}

/* Content-Length (RFC 9112 6.3): digits only; repeats must agree. */
static int apply_content_length(struct http_response *r, const char *v, size_t n)
{
    int64_t value = 0;
    if (n == 0 || n > 18)
        return fail(r, "Content-Length is not a number");
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return fail(r, "Content-Length is not a number");
        value = value * 10 + (v[i] - '0');
    }
    if (r->content_length >= 0 && r->content_length != value)
        return fail(r, "two different Content-Length values");
    r->content_length = value;
    return HTTP_MORE;
}

/* One field line `name: OWS value OWS` (RFC 9112 5). */
static int parse_field(struct http_response *r, const char *line, size_t len)
{
    size_t name_len = 0;
    if (line[0] == ' ' || line[0] == '\t')
        return fail(r, "obsolete header line folding");
    while (name_len < len && is_tchar(line[name_len]))
        name_len++;
    if (name_len == 0 || name_len == len || line[name_len] != ':')
        return fail(r, "a header line is not 'name: value'");
    const char *v = line + name_len + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    for (const char *p = v; p < end; p++)
        if ((unsigned char)*p < ' ' && *p != '\t')
            return fail(r, "a control character in a header value");
    if (name_len == 14 && strncasecmp(line, "Content-Length", 14) == 0)
        return apply_content_length(r, v, (size_t)(end - v));
    if (name_len == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0)
        return fail(r, "Transfer-Encoding (chunked) is not supported");
    return HTTP_MORE;
}

/* The head is r->head[0, len) and ends with CRLF CRLF. */
static int parse_head(struct http_response *r, size_t len)
{
    const char *p = r->head, *end = r->head + len - 2; /* the last CRLF ends the section */
    for (int first = 1; p < end; first = 0) {
        const char *eol = p;
        while (eol < end && *eol != '\r' && *eol != '\n' && *eol != '\0')
            eol++;
        if (eol < end && *eol == '\0')
            return fail(r, "a NUL byte in the response head");
        if (eol + 1 >= r->head + len || eol[0] != '\r' || eol[1] != '\n')
            return fail(r, "a header line does not end in CRLF");
        int res = first ? parse_status_line(r, p, (size_t)(eol - p))
                        : parse_field(r, p, (size_t)(eol - p));
        if (res == HTTP_ERROR)
            return res;
        p = eol + 2;
    }
    if (r->status != 200 || r->content_length == 0) {
        r->done = 1;
        return HTTP_DONE;
    }
    if (r->content_length > HTTP_MAX_BODY)
        return fail(r, "the body is larger than 4096 bytes");
    return HTTP_MORE;
}

static int feed_body(struct http_response *r, const char *data, size_t n)
{
    if (r->done)
        return n ? fail(r, "bytes after the end of the body") : HTTP_DONE;
    if (r->content_length >= 0 && (int64_t)(r->body_len + n) > r->content_length)
        return fail(r, "bytes after the end of the body");
    if (r->body_len + n > HTTP_MAX_BODY)
        return fail(r, "the body is larger than 4096 bytes");
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = '\0';
    if (r->content_length >= 0 && (int64_t)r->body_len == r->content_length) {
        r->done = 1;
        return HTTP_DONE;
    }
    return HTTP_MORE;
}

/* Appends to the head until CRLF CRLF; the bytes after it go to the body. */
static int feed_head(struct http_response *r, const char *data, size_t n)
{
    size_t room = sizeof r->head - r->head_len, take = n < room ? n : room;
    size_t from = r->head_len >= 3 ? r->head_len - 3 : 0;
    memcpy(r->head + r->head_len, data, take);
    r->head_len += take;
    for (size_t i = from; i + 4 <= r->head_len; i++) {
        if (memcmp(r->head + i, "\r\n\r\n", 4) == 0) {
            size_t head_end = i + 4, rest = r->head_len - head_end;
            r->in_body = 1;
            int res = parse_head(r, head_end);
            if (res == HTTP_ERROR || r->status != 200)
                return res; /* not 200: done, its body unread (http_client.h) */
            /* what followed the head in this chunk: the part already copied, then the rest */
            res = feed_body(r, r->head + head_end, rest);
            return res == HTTP_ERROR ? res : feed_body(r, data + take, n - take);
        }
    }
    if (r->head_len == sizeof r->head)
        return fail(r, "the header section is larger than 4096 bytes");
    return HTTP_MORE;
}

int http_response_feed(struct http_response *r, const char *data, size_t n)
{
    if (r->error)
        return HTTP_ERROR;
    return r->in_body ? feed_body(r, data, n) : feed_head(r, data, n);
}

int http_response_eof(struct http_response *r)
{
    if (r->error)
        return HTTP_ERROR;
    if (r->done)
        return HTTP_DONE;
    if (!r->in_body)
        return fail(r, r->head_len ? "the connection closed inside the response head"
                                   : "the connection closed without an answer");
    if (r->content_length < 0) {
        r->done = 1;
        return HTTP_DONE;
    }
    snprintf(r->error_buf, sizeof r->error_buf,
             "the connection closed after %zu of %lld body bytes", r->body_len,
             (long long)r->content_length);
    return fail(r, r->error_buf);
}
