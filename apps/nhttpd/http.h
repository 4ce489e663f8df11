/*
 * http.h: nhttpd's HTTP/1.1 request parser (RFC 9112 syntax, RFC 9110 semantics).
 *
 * Contract: the parser is pure. It reads bytes the caller has buffered, never allocates, never
 * does I/O, keeps no state between calls except the `scanned` hint the caller hands back, and
 * the request it fills points into the caller's buffer (valid while that buffer is unchanged).
 * A request head (request line, header fields, empty line) is parsed only once it is complete,
 * but a bad prefix is rejected as early as it is seen, so garbage costs one round trip, not a
 * timeout. Every rejection is the HTTP status code the server should answer with; after any
 * rejection the connection's framing is lost and the caller MUST close it after answering.
 * Request bodies are not parsed here: the caller skips `content_length` bytes after the head.
 */
#ifndef NHTTPD_HTTP_H
#define NHTTPD_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_MAX_HEAD    8192 /* request line + fields + empty line; more is 431 */
#define HTTP_MAX_TARGET  2048 /* request-target bytes; more is 414 */
#define HTTP_MAX_FIELDS  64   /* header fields; more is 431 */
#define HTTP_MAX_METHOD  32   /* a longer "method" is garbage: 400 */

/* Results of http_parse other than status codes. */
#define HTTP_PARSE_DONE 0 /* a complete, valid head: *req is filled */
#define HTTP_PARSE_MORE 1 /* no error so far; the head is not complete yet */

enum http_method {
    HTTP_GET,
    HTTP_HEAD,
    HTTP_KNOWN_OTHER, /* a method RFC 9110 defines that nhttpd does not allow: 405 */
    HTTP_UNKNOWN,     /* a well-formed method nobody defined: 501 */
};

struct http_request {
    enum http_method method;
    const char *target;   /* request-target as sent */
    size_t target_len;
    int version_minor;    /* HTTP/1.<minor>: 0 or 1 (higher minors are answered as 1.1) */
    bool keep_alive;      /* after version default and Connection tokens */
    uint64_t content_length;
    size_t head_len;      /* bytes of the head, leading empty lines included */
};

/* Parses the head at buf[0..len). *scanned is the caller's hint of bytes already known not to
 * end the head (start at 0, keep it between calls on the same request, reset to 0 after DONE).
 * Returns HTTP_PARSE_DONE, HTTP_PARSE_MORE, or the status to answer: 400 (malformed, missing
 * or repeated Host in 1.1, bad Content-Length), 414 (target too long), 431 (head or field count
 * too large), 501 (Transfer-Encoding: nhttpd takes no coded bodies, RFC 9112 6.1), 505 (major
 * version not 1). Methods are classified, not judged: 405 and 501 for them are the caller's,
 * so a well-framed request with a method nhttpd refuses keeps its connection. */
int http_parse(const char *buf, size_t len, size_t *scanned, struct http_request *req);

/* Turns a request-target (origin-form or absolute-form) into a normalized absolute path in
 * out[0..cap): query dropped, percent-decoding done, "." and ".." segments resolved, repeated
 * slashes collapsed. Returns the path length, or -400 for a malformed target (bad escape, NUL,
 * ".." above the root, asterisk-form, no room). */
int http_normalize_path(const char *target, size_t len, char *out, size_t cap);

/* The reason phrase of a status code nhttpd sends ("Not Found"); "Unknown" otherwise. */
const char *http_reason(int status);

#endif /* NHTTPD_HTTP_H */
