/* test_units.c: host unit tests of nhttpd's pure parts: the HTTP parser, path normalization,
 * latency statistics, the JSON writer, the buffer pool and the built-in document store.
 * `test_units NAME` runs one case and prints "PASS NAME"; `--list` names them all (the
 * pytest file tests/test_units.py runs each as its own case). Each case asks one question. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bufpool.h"
#include "check.h"
#include "docstore.h"
#include "docstore_builtin.h"
#include "http.h"
#include "http_scan.h"
#include "json.h"
#include "platform.h"
#include "stats.h"

/* stats.c renders the platform's members through this; the tests stand in for a platform. */
void platform_stats_json(struct json *j) { json_string(j, "platform", "test"); }

/* Parses a whole NUL-terminated request in one call. */
static int parse(const char *s, struct http_request *req)
{
    size_t scanned = 0;
    return http_parse(s, strlen(s), &scanned, req);
}

static int status_of(const char *s)
{
    struct http_request req;
    return parse(s, &req);
}

static int normalize(const char *target, char *out, size_t cap)
{
    return http_normalize_path(target, strlen(target), out, cap);
}

/* ---- parser: valid requests ---- */

/* Does a minimal HTTP/1.1 GET parse, with its target, version and default keep-alive? */
static void get_simple(void)
{
    const char *s = "GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n";
    struct http_request r;
    CHECK(parse(s, &r) == HTTP_PARSE_DONE);
    CHECK(r.method == HTTP_GET && r.version_minor == 1 && r.keep_alive);
    CHECK(r.target_len == 11 && memcmp(r.target, "/index.html", 11) == 0);
    CHECK(r.head_len == strlen(s) && r.content_length == 0);
}

/* Is HEAD recognized as its own method? */
static void head_method(void)
{
    struct http_request r;
    CHECK(parse("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.method == HTTP_HEAD);
}

/* Are methods RFC 9110 defines told apart from unknown ones (405 vs 501), case-sensitively? */
static void method_classes(void)
{
    struct http_request r;
    CHECK(parse("POST / HTTP/1.1\r\nHost: a\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.method == HTTP_KNOWN_OTHER);
    CHECK(parse("DELETE / HTTP/1.1\r\nHost: a\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.method == HTTP_KNOWN_OTHER);
    CHECK(parse("BREW / HTTP/1.1\r\nHost: a\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.method == HTTP_UNKNOWN);
    CHECK(parse("get / HTTP/1.1\r\nHost: a\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.method == HTTP_UNKNOWN);
}

/* Does HTTP/1.0 default to close, and keep alive only when asked? */
static void http10_keep_alive(void)
{
    struct http_request r;
    CHECK(parse("GET / HTTP/1.0\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.version_minor == 0 && !r.keep_alive);
    CHECK(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.keep_alive);
}

/* Does "Connection: close" (in any case, inside a token list) end an HTTP/1.1 connection? */
static void connection_close(void)
{
    struct http_request r;
    CHECK(parse("GET / HTTP/1.1\r\nHost: a\r\nconnection: TE, Close\r\n\r\n", &r) ==
          HTTP_PARSE_DONE);
    CHECK(!r.keep_alive);
}

/* Are bare-LF line ends accepted (RFC 9112 2.2)? */
static void bare_lf_lines(void)
{
    struct http_request r;
    const char *s = "GET / HTTP/1.1\nHost: a\n\n";
    CHECK(parse(s, &r) == HTTP_PARSE_DONE);
    CHECK(r.head_len == strlen(s));
}

/* Are empty lines before the request line skipped and counted in the head? */
static void leading_empty_lines(void)
{
    struct http_request r;
    const char *s = "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    CHECK(parse(s, &r) == HTTP_PARSE_DONE);
    CHECK(r.head_len == strlen(s) && r.method == HTTP_GET);
}

/* Does every proper prefix of a valid request ask for more, never fail? */
static void prefixes_ask_for_more(void)
{
    const char *s = "\r\nGET /a?b=c HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n";
    for (size_t n = 0; n < strlen(s); n++) {
        struct http_request r;
        size_t scanned = 0;
        CHECK(http_parse(s, n, &scanned, &r) == HTTP_PARSE_MORE);
    }
}

/* Does resuming with the scanned hint, byte by byte, find the same head? */
static void scanned_hint_resumes(void)
{
    const char *s = "GET / HTTP/1.1\r\nHost: a\r\nX-Long: 0123456789\r\n\r\nGET /next";
    size_t scanned = 0, end = strlen(s) - 9;
    struct http_request r;
    for (size_t n = 1; n < end; n++)
        CHECK(http_parse(s, n, &scanned, &r) == HTTP_PARSE_MORE);
    CHECK(scanned > 0 && scanned < end);
    CHECK(http_parse(s, strlen(s), &scanned, &r) == HTTP_PARSE_DONE);
    CHECK(r.head_len == end);
}

/* The status of s[0..len) delivered byte by byte (the scanned hint resumes each time: a head
 * arriving in pieces), into *r at the end. */
static int trickled(const char *s, size_t len, struct http_request *r)
{
    size_t scanned = 0;
    int status = HTTP_PARSE_MORE;
    for (size_t n = 1; n <= len && status == HTTP_PARSE_MORE; n++)
        status = http_parse(s, n, &scanned, r);
    return status;
}

/* Does a head parsed whole in one pass give what the same head gives arriving byte by byte
 * (find_head_end, then parse_head): the same status, and when it parses the same request?
 * Includes a head longer than HTTP_MAX_HEAD with a bad field early on: 431 either way. */
static void whole_and_trickled_heads_agree(void)
{
    static const char *const heads[] = {
        "GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n",
        "\r\n\nHEAD /x?q=1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "GET / HTTP/1.1\nHost: a\nContent-Length: 12\n\n",
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /2 HTTP/1.1\r\n",
        "GET / HTTP/2.0\r\nHost: a\r\n\r\n",
    };
    static char big[HTTP_MAX_HEAD + 64];
    size_t n = (size_t)sprintf(big, "GET / HTTP/1.1\r\nBad Field: x\r\nX: ");
    memset(big + n, 'v', sizeof big - n - 5);
    memcpy(big + sizeof big - 5, "\r\n\r\n", 5);
    for (size_t i = 0; i <= sizeof heads / sizeof heads[0]; i++) {
        const char *s = i < sizeof heads / sizeof heads[0] ? heads[i] : big;
        size_t len = s == big ? sizeof big : strlen(s), scanned = 0;
        struct http_request a, b;
        int whole = http_parse(s, len, &scanned, &a), pieces = trickled(s, len, &b);
        CHECK(whole == pieces);
        if (whole == HTTP_PARSE_DONE) {
            CHECK(a.method == b.method && a.version_minor == b.version_minor);
            CHECK(a.keep_alive == b.keep_alive && a.head_len == b.head_len);
            CHECK(a.content_length == b.content_length && a.target_len == b.target_len);
        }
    }
}

/* With two pipelined requests buffered, is only the first consumed? */
static void pipelined_heads(void)
{
    const char *s = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n";
    struct http_request r;
    CHECK(parse(s, &r) == HTTP_PARSE_DONE);
    CHECK(r.head_len == strlen(s) / 2 && r.target[1] == '1');
    CHECK(parse(s + r.head_len, &r) == HTTP_PARSE_DONE && r.target[1] == '2');
}

/* Is Content-Length read, and a huge one saturated (413 for the caller), not wrapped? */
static void content_length(void)
{
    struct http_request r;
    CHECK(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n", &r) ==
          HTTP_PARSE_DONE);
    CHECK(r.content_length == 42);
    CHECK(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                &r) == HTTP_PARSE_DONE);
    CHECK(r.content_length == UINT64_MAX);
    CHECK(parse("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\n",
                &r) == HTTP_PARSE_DONE);
}

/* Is a higher HTTP/1.x minor version answered as 1.1? */
static void higher_minor_version(void)
{
    struct http_request r;
    CHECK(parse("GET / HTTP/1.7\r\nHost: a\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.version_minor == 1);
}

/* ---- parser: rejections ---- */

/* Is a request line that cannot be HTTP rejected with 400? */
static void malformed_request_lines(void)
{
    CHECK(status_of("GET\r\n\r\n") == 400);
    CHECK(status_of("GET /\r\n\r\n") == 400);                  /* HTTP/0.9 */
    CHECK(status_of("GET  / HTTP/1.1\r\nHost: a\r\n\r\n") == 400); /* two spaces */
    CHECK(status_of("GET / HTTX/1.1\r\nHost: a\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1 \r\nHost: a\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/11\r\nHost: a\r\n\r\n") == 400);
    CHECK(status_of("G(T / HTTP/1.1\r\nHost: a\r\n\r\n") == 400);
    CHECK(status_of("GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n") == 400);
}

/* Is garbage rejected before any line end arrives (no wait for a timeout)? */
static void garbage_rejected_early(void)
{
    struct http_request r;
    size_t scanned = 0;
    CHECK(http_parse("\x16\x03\x01\x02", 4, &scanned, &r) == 400); /* a TLS hello */
    CHECK(http_parse("GET /x HTTQ", 11, &scanned, &r) == 400);
    CHECK(http_parse("GET /x HTTP/1.1x", 16, &scanned, &r) == 400);
    CHECK(http_parse("GET\t/", 5, &scanned, &r) == 400);
}

/* Is a request-target over HTTP_MAX_TARGET a 414, even before its line ends? */
static void target_too_long(void)
{
    static char s[HTTP_MAX_TARGET + 64];
    struct http_request r;
    size_t scanned = 0;
    memcpy(s, "GET /", 5);
    memset(s + 5, 'a', HTTP_MAX_TARGET);
    CHECK(http_parse(s, HTTP_MAX_TARGET + 5, &scanned, &r) == 414);
    strcpy(s + 5 + HTTP_MAX_TARGET, " HTTP/1.1\r\nHost: a\r\n\r\n");
    CHECK(parse(s, &r) == 414);
}

/* Is a head that reaches HTTP_MAX_HEAD without ending a 431? */
static void head_too_large(void)
{
    static char s[HTTP_MAX_HEAD + 1];
    struct http_request r;
    size_t scanned = 0, n = (size_t)sprintf(s, "GET / HTTP/1.1\r\nHost: a\r\nX: ");
    memset(s + n, 'v', sizeof s - 1 - n);
    CHECK(http_parse(s, HTTP_MAX_HEAD - 1, &scanned, &r) == HTTP_PARSE_MORE);
    CHECK(http_parse(s, HTTP_MAX_HEAD, &scanned, &r) == 431);
}

/* Are more than HTTP_MAX_FIELDS header fields a 431? */
static void too_many_fields(void)
{
    static char s[HTTP_MAX_HEAD];
    size_t n = (size_t)sprintf(s, "GET / HTTP/1.1\r\nHost: a\r\n");
    for (int i = 0; i < HTTP_MAX_FIELDS; i++)
        n += (size_t)sprintf(s + n, "X-%d: y\r\n", i);
    strcpy(s + n, "\r\n");
    CHECK(status_of(s) == 431);
}

/* Is a major version other than 1 a 505? */
static void version_not_supported(void)
{
    CHECK(status_of("GET / HTTP/2.0\r\nHost: a\r\n\r\n") == 505);
    CHECK(status_of("GET / HTTP/0.9\r\nHost: a\r\n\r\n") == 505);
}

/* Does HTTP/1.1 require exactly one Host (RFC 9112 3.2)? */
static void host_rules(void)
{
    CHECK(status_of("GET / HTTP/1.1\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.0\r\n\r\n") == HTTP_PARSE_DONE);
}

/* Are malformed fields rejected: space before colon, obs-fold, no colon, controls, bare CR? */
static void malformed_fields(void)
{
    CHECK(status_of("GET / HTTP/1.1\r\nHost : a\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n  folded\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n") == 400);
}

/* Is a field value with a NUL byte rejected (the parser is not fooled by C strings)? */
static void nul_in_field(void)
{
    static const char s[] = "GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n";
    struct http_request r;
    size_t scanned = 0;
    CHECK(http_parse(s, sizeof s - 1, &scanned, &r) == 400);
}

/* Are bad or conflicting Content-Lengths a 400 (RFC 9112 6.3)? */
static void bad_content_length(void)
{
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\n"
                    "Content-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400);
}

/* Is Transfer-Encoding a 501, and with Content-Length a 400 (RFC 9112 6.1)? */
static void transfer_encoding(void)
{
    CHECK(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n") == 501);
    CHECK(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
                    "Content-Length: 3\r\n\r\n") == 400);
}

/* Are field names matched in any case, and only by letters differing in case (the word
 * compare ORs 0x20 into the letters alone)? */
static void field_names_any_case(void)
{
    CHECK(status_of("GET / HTTP/1.1\r\nhOsT: a\r\n\r\n") == HTTP_PARSE_DONE);
    CHECK(status_of("GET / HTTP/1.1\r\nHOST: a\r\nhost: b\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHosu: a\r\n\r\n") == 400); /* no Host */
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nCONTENT-length: 1x\r\n\r\n") == 400);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nContent_Length: 1x\r\n\r\n") ==
          HTTP_PARSE_DONE);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nContent-Lengtj: 1x\r\n\r\n") ==
          HTTP_PARSE_DONE);
    CHECK(status_of("POST / HTTP/1.1\r\nHost: a\r\nTRANSFER-ENCODING: x\r\n\r\n") == 501);
    CHECK(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encodinf: x\r\n\r\n") ==
          HTTP_PARSE_DONE);
    struct http_request r;
    CHECK(parse("GET / HTTP/1.0\r\nCONNECTION: KEEP-ALIVE\r\n\r\n", &r) == HTTP_PARSE_DONE);
    CHECK(r.keep_alive);
    CHECK(parse("GET / HTTP/1.0\r\nConnection: keep-alivf, keep-aliv\r\n\r\n", &r) ==
          HTTP_PARSE_DONE);
    CHECK(!r.keep_alive);
    char out[64];
    CHECK(normalize("http\x1a//host/x", out, sizeof out) == -400); /* ':' ^ 0x20 */
    CHECK(normalize("http:\x0f/host/x", out, sizeof out) == -400); /* '/' ^ 0x20 */
    CHECK(normalize("hTtPs://host/x", out, sizeof out) == 2 && strcmp(out, "/x") == 0);
}

/* Are exactly RFC 9110's tchars accepted in a method and a field name, of all 256 bytes? (An
 * LF there ends a line, which parses for its own reasons.) */
static void tchars_every_byte(void)
{
    static const char method_at_0[] = "?GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    static const char name_at_25[] = "GET / HTTP/1.1\r\nHost: a\r\n?X: 1\r\n\r\n";
    for (int c = 0; c < 256; c++) {
        bool tchar = (c < 128 && isalnum(c)) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c));
        int want = tchar || c == '\n' ? HTTP_PARSE_DONE : 400;
        char method[sizeof method_at_0], name[sizeof name_at_25];
        memcpy(method, method_at_0, sizeof method);
        memcpy(name, name_at_25, sizeof name);
        method[0] = name[25] = (char)c; /* NUL too: the lengths are given */
        struct http_request r;
        size_t scanned = 0;
        CHECK(http_parse(method, sizeof method - 1, &scanned, &r) == want);
        scanned = 0;
        CHECK(http_parse(name, sizeof name - 1, &scanned, &r) == want);
    }
}

/* Byte by byte, as http_scan.h's word scans must answer. */
static size_t span_bytewise(const char *s, size_t n, bool (*ok)(unsigned char))
{
    size_t i = 0;
    while (i < n && ok((unsigned char)s[i]))
        i++;
    return i;
}

/* Do the word scans stop at the first byte outside their class, exactly, for every length up
 * to two words and a byte, every byte value in every position, and a tab before it? */
static void scans_stop_exactly(void)
{
    char s[17];
    for (size_t n = 0; n <= sizeof s; n++)
        for (size_t at = 0; at <= n; at++)
            for (int c = 0; c < 256; c++)
                for (int tab = 0; tab < 2; tab++) {
                    memset(s, 'a', sizeof s);
                    if (at < n)
                        s[at] = (char)c;
                    if (tab && at > 0)
                        s[at - 1] = '\t';
                    CHECK(span_target_chars(s, n) == span_bytewise(s, n, is_target_char));
                    CHECK(span_field_chars(s, n) == span_bytewise(s, n, is_field_char));
                }
}

/* The normalized path of a target, or its status as a string: as http_normalize_path gives it
 * with room to spare (its copy of a plain path), or with room for no more than the target (its
 * general path: a plain path copied has len + 2 < cap). */
static void normalized(const char *t, size_t len, bool spare, char *out, size_t cap)
{
    char path[64];
    int n = http_normalize_path(t, len, path, spare ? sizeof path : len + 2);
    if (n < 0)
        snprintf(out, cap, "%d", n);
    else
        snprintf(out, cap, "[%.*s]", n, path);
}

/* Does the shortcut for plain paths (words of bytes) give what the general path gives, for
 * every length up to two words and a byte, with each byte it looks for in each position? */
static void plain_path_shortcut_exact(void)
{
    static const char *const odd[] = {"%", "?", "#", "//", "/.", "/x", ".", "\x80", "\xff"};
    char t[18], spare[80], general[80];
    for (size_t len = 1; len <= 17; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t k = 0; k < sizeof odd / sizeof odd[0] + 1; k++) {
                const char *b = k < sizeof odd / sizeof odd[0] ? odd[k] : "\0";
                size_t bn = k < sizeof odd / sizeof odd[0] ? strlen(b) : 1;
                memset(t, 'x', sizeof t);
                t[0] = '/';
                memcpy(t + at, b, at + bn <= len ? bn : len - at);
                normalized(t, len, true, spare, sizeof spare);
                normalized(t, len, false, general, sizeof general);
                CHECK(strcmp(spare, general) == 0);
            }
}

/* ---- path normalization ---- */

/* Are ".", ".." and repeated slashes resolved as RFC 3986 5.2.4 says? */
static void path_dot_segments(void)
{
    char out[64];
    CHECK(normalize("/", out, sizeof out) == 1 && strcmp(out, "/") == 0);
    CHECK(normalize("/a/./b/../c", out, sizeof out) > 0 && strcmp(out, "/a/c") == 0);
    CHECK(normalize("/a/b/..", out, sizeof out) > 0 && strcmp(out, "/a/") == 0);
    CHECK(normalize("/a/.", out, sizeof out) > 0 && strcmp(out, "/a/") == 0);
    CHECK(normalize("//a///b/", out, sizeof out) > 0 && strcmp(out, "/a/b/") == 0);
    CHECK(normalize("/a/..", out, sizeof out) > 0 && strcmp(out, "/") == 0);
}

/* Is a path that climbs above the root refused, however it is spelled? */
static void path_above_root(void)
{
    char out[64];
    CHECK(normalize("/..", out, sizeof out) == -400);
    CHECK(normalize("/a/../../etc/passwd", out, sizeof out) == -400);
    CHECK(normalize("/%2e%2e/etc/passwd", out, sizeof out) == -400);
    CHECK(normalize("/.%2E/x", out, sizeof out) == -400);
}

/* Is percent-decoding done, and are bad escapes, %00 and %2F refused? */
static void path_percent(void)
{
    char out[64];
    CHECK(normalize("/a%20b", out, sizeof out) > 0 && strcmp(out, "/a b") == 0);
    CHECK(normalize("/a%2", out, sizeof out) == -400);
    CHECK(normalize("/a%zz", out, sizeof out) == -400);
    CHECK(normalize("/a%00b", out, sizeof out) == -400);
    CHECK(normalize("/a%2Fb", out, sizeof out) == -400);
}

/* Is the query dropped, absolute-form accepted and asterisk-form refused? */
static void path_forms(void)
{
    char out[64];
    CHECK(normalize("/x?y=/../..", out, sizeof out) > 0 && strcmp(out, "/x") == 0);
    CHECK(normalize("http://host:80/p/q", out, sizeof out) > 0 && strcmp(out, "/p/q") == 0);
    CHECK(normalize("HTTP://host", out, sizeof out) > 0 && strcmp(out, "/") == 0);
    CHECK(normalize("*", out, sizeof out) == -400);
    CHECK(normalize("relative", out, sizeof out) == -400);
}

/* Does a path that does not fit the output fail instead of overflowing? */
static void path_no_room(void)
{
    char out[8];
    CHECK(normalize("/abcdefghij", out, sizeof out) == -400);
    CHECK(normalize("/abcd", out, sizeof out) == 5 && strcmp(out, "/abcd") == 0);
}

/* ---- statistics ---- */

/* Are mean and standard deviation those of the samples? */
static void stats_mean_stddev(void)
{
    static struct stats s;
    char buf[4096];
    stats_start(&s, 0, 1000000000u);
    for (int i = 1; i <= 1000; i++)
        stats_response(&s, 200, (uint64_t)i * 1000); /* 1..1000 us */
    CHECK(fabs(stats_mean_ns(&s.total.latency) - 500500.0) < 1e-3);
    double sd = stats_stddev_ns(&s.total.latency);
    CHECK(fabs(sd - 288819.0) < 1.0); /* sqrt(1000 * 1001 / 12) us, sample form */
    CHECK(stats_render(&s, 1000000000u, buf, sizeof buf) > 0);
}

/* Is p99 within one histogram sub-bucket (1/16) of the true value? */
static void stats_p99(void)
{
    static struct stats s;
    stats_start(&s, 0, 1000000000u);
    for (int i = 1; i <= 10000; i++)
        stats_response(&s, 200, (uint64_t)i * 100);
    double p99 = stats_quantile_ns(&s.total.latency, 0.99);
    CHECK(fabs(p99 - 990000.0) <= 990000.0 / 16);
    CHECK(stats_quantile_ns(&s.total.latency, 1.0) <= 1000000.0);
}

/* Do ticks convert to ns at the platform's rate (a 2.5 GHz TSC here)? */
static void stats_tick_rate(void)
{
    static struct stats s;
    stats_start(&s, 0, 2500000000u);
    stats_response(&s, 200, 2500); /* 1 us */
    CHECK(s.total.latency.max_ns == 1000);
}

/* Does a stats query close the interval window and keep the total one? */
static void stats_interval_resets(void)
{
    static struct stats s;
    char buf[4096];
    stats_start(&s, 0, 1000);
    stats_response(&s, 404, 1);
    stats_sent(&s, 100);
    CHECK(stats_render(&s, 2000, buf, sizeof buf) > 0);
    CHECK(strstr(buf, "\"4xx\":1") != NULL);
    CHECK(s.total.requests == 1 && s.total.bytes_sent == 100);
    CHECK(stats_render(&s, 3000, buf, sizeof buf) > 0);
    const char *interval = strstr(buf, "\"interval\":");
    CHECK(interval != NULL && strstr(interval, "\"seconds\":1.000,\"requests\":0,") != NULL);
    CHECK(strstr(interval, "\"samples\":0,") != NULL && strstr(interval, "\"max\":0.000") != NULL);
}

/* Is the interval window the responses since the last query alone: their count, bytes, mean,
 * deviation and maximum, though the total holds a bigger one? */
static void stats_interval_figures(void)
{
    static struct stats s;
    char buf[4096];
    stats_start(&s, 0, 1000000000u);
    stats_response(&s, 200, 50000); /* 50 us, before the interval */
    CHECK(stats_render(&s, 1, buf, sizeof buf) > 0);
    stats_response(&s, 200, 2000);
    stats_response(&s, 404, 4000);
    stats_sent(&s, 7);
    CHECK(stats_render(&s, 2, buf, sizeof buf) > 0);
    const char *interval = strstr(buf, "\"interval\":");
    CHECK(interval != NULL && strstr(buf, "\"max\":50.000") < interval);
    CHECK(strstr(interval, "\"requests\":2,") != NULL && strstr(interval, "\"4xx\":1,") != NULL);
    CHECK(strstr(interval, "\"bytes_sent\":7,") != NULL);
    CHECK(strstr(interval, "\"samples\":2,\"mean\":3.000,") != NULL);
    CHECK(strstr(interval, "\"stddev\":1.414,\"max\":4.000") != NULL);
}

/* Does rendering into a too small buffer fail instead of truncating? */
static void stats_render_overflow(void)
{
    static struct stats s;
    char buf[100];
    stats_start(&s, 0, 1000);
    CHECK(stats_render(&s, 1, buf, sizeof buf) == -1);
}

/* ---- JSON, buffers, documents ---- */

/* Does the writer place commas and escape strings? */
static void json_writer(void)
{
    char buf[128];
    struct json j;
    json_init(&j, buf, sizeof buf);
    json_object_begin(&j, NULL);
    json_uint(&j, "a", 1);
    json_object_begin(&j, "o");
    json_string(&j, "s", "q\"\\\n");
    json_object_end(&j);
    json_double(&j, "nan", NAN);
    json_bool(&j, "t", true);
    json_object_end(&j);
    CHECK(json_finish(&j) > 0);
    CHECK(strcmp(buf, "{\"a\":1,\"o\":{\"s\":\"q\\\"\\\\\\u000a\"},\"nan\":null,\"t\":true}") == 0);
}

/* Does the pool refuse past its limit and hand returned buffers out again? */
static void bufpool_limit_and_reuse(void)
{
    struct bufpool p;
    bufpool_init(&p, 64, 2);
    void *a = bufpool_get(&p), *b = bufpool_get(&p);
    CHECK(a != NULL && b != NULL && bufpool_get(&p) == NULL && p.failures == 1);
    bufpool_put(&p, a);
    CHECK(bufpool_get(&p) == a && p.in_use == 2 && p.peak == 2);
    bufpool_put(&p, a);
    bufpool_put(&p, b);
    CHECK(p.in_use == 0);
    while (p.free_list != NULL) { /* the server keeps its pools for life; a test does not */
        void *next = *(void **)p.free_list;
        free(p.free_list);
        p.free_list = next;
    }
}

static int open_doc(const char *path, struct doc *d)
{
    return docstore_open(path, strlen(path), d);
}

/* Does the built-in store serve "/" as the 175-byte index, with each document's media type,
 * and refuse a missing path? */
static void builtin_store(void)
{
    struct doc d;
    char head[16];
    CHECK(docstore_init(NULL) == 0 && docstore_init("/srv") == -EINVAL);
    CHECK(open_doc("/", &d) == 0 && d.size == 175 && d.bytes != NULL);
    CHECK(strcmp(d.content_type, "text/html") == 0);
    CHECK(docstore_read(&d, 0, head, 15) == 15 && memcmp(head, "<!DOCTYPE html>", 15) == 0);
    CHECK(docstore_read(&d, 170, head, 16) == 5 && docstore_read(&d, 175, head, 1) == 0);
    docstore_close(&d);
    CHECK(open_doc("/index.html", &d) == 0 && d.size == 175);
    CHECK(strcmp(d.content_type, "text/html") == 0);
    CHECK(open_doc("/large.bin", &d) == 0 && d.size == 1u << 20);
    CHECK(strcmp(d.content_type, "application/octet-stream") == 0);
    CHECK(open_doc("", &d) == -ENOENT && open_doc("/nodir/", &d) == -ENOENT);
    CHECK(open_doc("/missing.html", &d) == -ENOENT);
    CHECK(open_doc("/index.html/", &d) == -ENOENT);
    /* Paths as long as a document's, or one byte off, that are not it. */
    CHECK(open_doc("/index.htmx", &d) == -ENOENT && open_doc("/Index.html", &d) == -ENOENT);
    CHECK(open_doc("/index.htm", &d) == -ENOENT && open_doc("/index.html2", &d) == -ENOENT);
    CHECK(open_doc("/large.bim", &d) == -ENOENT && open_doc("/large.bin/", &d) == -ENOENT);
}

/* Is mkwww.py's table in the order the store's binary search takes (by length, then bytes),
 * with each path's length right? */
static void builtin_table_order(void)
{
    for (size_t i = 0; i < nhttpd_builtin_count; i++)
        CHECK(nhttpd_builtin_docs[i].path_len == strlen(nhttpd_builtin_docs[i].path));
    for (size_t i = 1; i < nhttpd_builtin_count; i++) {
        const struct builtin_doc *prev = &nhttpd_builtin_docs[i - 1], *d = &nhttpd_builtin_docs[i];
        CHECK(prev->path_len < d->path_len ||
              (prev->path_len == d->path_len && memcmp(prev->path, d->path, d->path_len) < 0));
    }
}

/* Are media types chosen by the last extension of the last segment only? */
static void content_types(void)
{
    CHECK(strcmp(docstore_content_type("/a.html"), "text/html") == 0);
    CHECK(strcmp(docstore_content_type("/x.tar.json"), "application/json") == 0);
    CHECK(strcmp(docstore_content_type("/dir.html/file"), "application/octet-stream") == 0);
    CHECK(strcmp(docstore_content_type("/large.bin"), "application/octet-stream") == 0);
    CHECK(strcmp(docstore_content_type("/"), "application/octet-stream") == 0);
    CHECK(strcmp(docstore_content_type("/a."), "application/octet-stream") == 0);
    CHECK(strcmp(docstore_content_type("/.json"), "application/json") == 0);
    CHECK(strcmp(docstore_content_type("noslash.css"), "text/css") == 0);
    CHECK(strcmp(docstore_content_type(""), "application/octet-stream") == 0);
}

#define CASE(name) {#name, name}
static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    CASE(get_simple),
    CASE(head_method),
    CASE(method_classes),
    CASE(http10_keep_alive),
    CASE(connection_close),
    CASE(bare_lf_lines),
    CASE(leading_empty_lines),
    CASE(prefixes_ask_for_more),
    CASE(scanned_hint_resumes),
    CASE(whole_and_trickled_heads_agree),
    CASE(pipelined_heads),
    CASE(content_length),
    CASE(higher_minor_version),
    CASE(malformed_request_lines),
    CASE(garbage_rejected_early),
    CASE(target_too_long),
    CASE(head_too_large),
    CASE(too_many_fields),
    CASE(version_not_supported),
    CASE(host_rules),
    CASE(malformed_fields),
    CASE(nul_in_field),
    CASE(bad_content_length),
    CASE(transfer_encoding),
    CASE(field_names_any_case),
    CASE(tchars_every_byte),
    CASE(scans_stop_exactly),
    CASE(plain_path_shortcut_exact),
    CASE(path_dot_segments),
    CASE(path_above_root),
    CASE(path_percent),
    CASE(path_forms),
    CASE(path_no_room),
    CASE(stats_mean_stddev),
    CASE(stats_p99),
    CASE(stats_tick_rate),
    CASE(stats_interval_resets),
    CASE(stats_interval_figures),
    CASE(stats_render_overflow),
    CASE(json_writer),
    CASE(bufpool_limit_and_reuse),
    CASE(builtin_store),
    CASE(builtin_table_order),
    CASE(content_types),
};
CHECK_CASES(cases)

int main(int argc, char **argv)
{
    return check_cases_main(argc, argv);
}
