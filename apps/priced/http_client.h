/*
 * http_client.h: priced's small, strict HTTP/1.1 client (RFC 9110/9112 subset): one GET per
 * connection ("Connection: close"), a body delimited by Content-Length or by the server
 * closing, everything bounded (header section, body, time).
 *
 * Contract. http_url_parse() accepts only `http://A.B.C.D[:PORT]/PATH` (numeric IPv4: nom's
 * stack has no DNS, net/README.md). The response parser is pure code fed with whatever bytes
 * arrive (the host unit tests drive it directly): it wants CRLF line ends, a status line
 * `HTTP/1.x NNN reason`, headers without obsolete line folding, at most one Content-Length
 * value (repeats must agree), and no Transfer-Encoding (chunked bodies are refused, not
 * decoded). Anything else is a protocol error with a one-line reason. http_get() runs one
 * exchange over POSIX sockets (non-blocking, poll() against one deadline), so it builds for
 * nom (net/) and for the host alike.
 */
#ifndef PRICED_HTTP_CLIENT_H
#define PRICED_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD 4096 /* bytes of status line plus headers */
#define HTTP_MAX_BODY 4096 /* bytes of body: price.txt is one short line */
#define HTTP_MAX_PATH 200

struct http_url {
    uint32_t ip;   /* network byte order */
    uint16_t port; /* host byte order */
    char host[24]; /* "A.B.C.D:PORT", for the Host header */
    char path[HTTP_MAX_PATH];
};

/* Parses url into *out. 0, or -1 with a reason in why (e.g. "only http:// is supported"). */
int http_url_parse(const char *url, struct http_url *out, char *why, size_t whylen);

enum http_parse_result { HTTP_MORE = 0, HTTP_DONE = 1, HTTP_ERROR = -1 };

struct http_response {
    int status;             /* from the status line, once parsed */
    char reason[64];        /* its reason phrase (truncated) */
    int64_t content_length; /* -1: the body ends when the server closes */
    char body[HTTP_MAX_BODY + 1]; /* NUL-terminated */
    size_t body_len;
    const char *error;      /* why HTTP_ERROR (a static string or error_buf) */
    char error_buf[80];
    /* the parser's own */
    int in_body, done;
    char head[HTTP_MAX_HEAD];
    size_t head_len;
};

/* Prepares *r for a new response. */
void http_response_init(struct http_response *r);
/* Feeds n received bytes: HTTP_MORE (wants more), HTTP_DONE (complete; bytes after the body
 * are an error), or HTTP_ERROR (r->error says why: malformed, oversized, not supported). A
 * status other than 200 completes the response at the end of its head (its body is not
 * read: an error page may be bigger than HTTP_MAX_BODY). */
int http_response_feed(struct http_response *r, const char *data, size_t n);
/* The server closed the connection: HTTP_DONE if that ends a close-delimited body, else
 * HTTP_ERROR (truncated head or body). */
int http_response_eof(struct http_response *r);

/* Why an exchange failed, coarsely: priced reports a failure episode once per kind. */
enum http_failure {
    HTTP_OK = 0,
    HTTP_FAIL_UNREACHABLE, /* no connection: refused, unreachable, reset before an answer */
    HTTP_FAIL_TIMEOUT,     /* no complete answer before the deadline */
    HTTP_FAIL_PROTOCOL,    /* an answer that is not acceptable HTTP (or too big) */
    HTTP_FAIL_STATUS,      /* well-formed, but not 200 OK */
};

/* GETs url->path from url with "Connection: close", within timeout_ms for the whole
 * exchange. HTTP_OK with the 200 response in *r, or a failure with a one-line reason in why.
 * Never blocks past the deadline; always closes its socket. */
enum http_failure http_get(const struct http_url *url, uint32_t timeout_ms,
                           struct http_response *r, char *why, size_t whylen);

#endif /* PRICED_HTTP_CLIENT_H */
