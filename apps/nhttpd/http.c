/* http.c: nhttpd's request parser and path normalizer (http.h; RFC 9112 2-6, RFC 3986 5.2.4). */
#include "http.h"
#include "http_scan.h"

#include <string.h>

/* RFC 9110 5.6.2: token characters, DIGIT / ALPHA / "!#$%&'*+-.^_`|~". A table, not strchr
 * over the symbols: the space after the method and the colon and dash of every field name each
 * cost a strchr call, 2% of nhttpd's instructions per request (issue 16's profile). A byte per
 * byte value, the character itself where it is a tchar, a space or (from 0x80) NUL where not:
 * one compare a character, where a bit per value took five more instructions (the scans of
 * the method and the Host field's name cost 107 instructions a request with bits, 43 with
 * bytes: issue 16). */
static const char tchar_table[256] = "                                "  /* 0x00-0x1f */
                                     " ! #$%&'  *+ -. 0123456789      "  /* 0x20-0x3f */
                                     " ABCDEFGHIJKLMNOPQRSTUVWXYZ   ^_"  /* 0x40-0x5f */
                                     "`abcdefghijklmnopqrstuvwxyz | ~ "; /* 0x60-0x7f */

static bool is_tchar(unsigned char c) { return tchar_table[c] > ' '; }

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* a[0..n) is lit, a lower-case literal, in any case. A macro so that the length test, which
 * settles most mismatches, is a constant compare, not a strlen, and so that same_nocase gets
 * lit padded with NULs: a word can be read from it whatever its length. */
#define EQUALS_NOCASE(a, n, lit) \
    ((n) == sizeof(lit) - 1 && same_nocase((a), lit "\0\0\0\0\0\0\0", sizeof(lit) - 1))

/* 0x20 in the bytes of w (ASCII) that are lower-case letters. No carry crosses a byte, as every
 * byte is below 0x80; for a literal's word, the compiler works it out. */
static inline uint64_t letter_bits(uint64_t w)
{
    uint64_t from_a = w + SCAN_ONES * (0x80 - 'a'), past_z = w + SCAN_ONES * (0x80 - 'z' - 1);
    return (from_a & ~past_z & SCAN_HIGHS) >> 2;
}

/* Whether the n <= 8 bytes at a are those of lit (a lower-case literal, NULs after its n
 * bytes) in any case: 0x20 or'ed into the bytes where lit has a letter makes 'H' and 'h' both
 * 'h', and nothing else 'h'. */
static inline bool same_nocase_word(const char *a, const char *lit, size_t n)
{
    uint64_t x = 0, y = scan_load8(lit);
    __builtin_memcpy(&x, a, n);
    return (x | letter_bits(y)) == y;
}

/* A word at a time, the last one overlapping the one before: "host" cost 42 instructions byte
 * by byte, 4 as a word (issue 16). lit as EQUALS_NOCASE passes it. */
static inline bool same_nocase(const char *a, const char *lit, size_t n)
{
    if (n <= 8)
        return same_nocase_word(a, lit, n);
    for (size_t i = 0; i + 8 < n; i += 8)
        if (!same_nocase_word(a + i, lit + i, 8))
            return false;
    return same_nocase_word(a + n - 8, lit + n - 8, 8);
}

/* Methods are case-sensitive (RFC 9110 9.1). */
static enum http_method classify_method(const char *m, size_t n)
{
    static const char *const others[] = {"POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
                                         "PATCH"};
    if (n == 3 && m[0] == 'G' && m[1] == 'E' && m[2] == 'T')
        return HTTP_GET;
    if (n == 4 && m[0] == 'H' && m[1] == 'E' && m[2] == 'A' && m[3] == 'D')
        return HTTP_HEAD;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (strlen(others[i]) == n && memcmp(m, others[i], n) == 0)
            return HTTP_KNOWN_OTHER;
    return HTTP_UNKNOWN;
}

/* The length of the line end (LF, or CR LF: RFC 9112 2.2 lets a recipient accept a bare LF) at
 * the start of l[0..avail), or 0 if none is there. */
static size_t line_end(const char *l, size_t avail)
{
    if (avail >= 1 && l[0] == '\n')
        return 1;
    return avail >= 2 && l[0] == '\r' && l[1] == '\n' ? 2 : 0;
}

/* RFC 9112 2.2: a server SHOULD ignore at least one empty line before the request-line. */
static size_t skip_empty_lines(const char *b, size_t len)
{
    size_t i = 0, n;
    while ((n = line_end(b + i, len - i)) != 0)
        i += n;
    return i;
}

/* Offset just past the empty line that ends the head, or 0. Lines end in LF, optionally
 * preceded by CR (RFC 9112 2.2 lets a recipient accept a bare LF). *scanned only ever points
 * at the start of a line, so a resumed scan sees whole lines. */
static size_t find_head_end(const char *b, size_t len, size_t lead, size_t *scanned)
{
    size_t pos = *scanned > lead ? *scanned : lead;
    for (;;) {
        const char *nl = memchr(b + pos, '\n', len - pos);
        if (nl == NULL) {
            *scanned = pos;
            return 0;
        }
        size_t line = (size_t)(nl - (b + pos));
        if (pos > lead && (line == 0 || (line == 1 && b[pos] == '\r')))
            return (size_t)(nl - b) + 1;
        pos = (size_t)(nl - b) + 1;
    }
}

/* v[0..8) is "HTTP/" DIGIT "." DIGIT (RFC 9112 2.3), tested as one word: the letters, the
 * slash and the dot are compared at once, then the two digits. */
static bool is_version(const char *v)
{
    static const char pattern[8] = {'H', 'T', 'T', 'P', '/', 0, '.', 0};
    static const unsigned char mask[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0};
    uint64_t w = scan_load8(v), p, m;
    __builtin_memcpy(&p, pattern, 8);
    __builtin_memcpy(&m, mask, 8);
    return (w & m) == p && is_digit((unsigned char)v[5]) && is_digit((unsigned char)v[7]);
}

/*
 * The line parsers below read a line and its end from l[0..avail), which holds the line and
 * maybe what follows it, so the parser's own scan finds where the line ends: a memchr for the
 * LF first was a second pass over every line (160 instructions per request, issue 16). Each
 * sets *next to the line's length with its end once it has seen that end (always when it
 * returns HTTP_PARSE_DONE) and leaves it 0 otherwise. The status does not depend on what
 * follows the line: every byte a parser accepts before the line end is one that no line end
 * (CR, LF) can be, so it stops at the same byte whether l holds this line alone or more. A
 * status without *next is the line's once a LF shows the line complete (the caller looks for
 * it); before that the line is only incomplete.
 */

/* RFC 9112 3: method SP request-target SP HTTP-version, then the line end. */
static int parse_request_line(const char *l, size_t avail, struct http_request *req,
                              size_t *next)
{
    size_t i = 0;
    while (i < avail && is_tchar((unsigned char)l[i]))
        i++;
    if (i == 0 || i > HTTP_MAX_METHOD || i == avail || l[i] != ' ')
        return 400;
    req->method = classify_method(l, i);
    size_t t = ++i;
    i += span_target_chars(l + t, avail - t);
    if (i - t > HTTP_MAX_TARGET)
        return 414;
    if (i == t || i == avail || l[i] != ' ')
        return 400;
    req->target = l + t;
    req->target_len = i - t;
    const char *v = l + i + 1;
    size_t rest = avail - i - 1, end;
    /* The version is the line's last eight bytes: its end follows at once. */
    if (rest < 9 || !is_version(v) || (end = line_end(v + 8, rest - 8)) == 0)
        return 400;
    *next = i + 9 + end;
    if (v[5] != '1')
        return 505;
    req->version_minor = v[7] == '0' ? 0 : 1;
    return HTTP_PARSE_DONE;
}

/* A request line still arriving: reject it as soon as its prefix cannot become valid. */
static int check_partial_line(const char *l, size_t n)
{
    static const char version[] = "HTTP/d.d\r";
    size_t i = 0;
    if (n == 1 && l[0] == '\r')
        return HTTP_PARSE_MORE; /* maybe an empty line's CR */
    while (i < n && is_tchar((unsigned char)l[i]))
        i++;
    if (i > HTTP_MAX_METHOD || (i < n && (i == 0 || l[i] != ' ')))
        return 400;
    if (i == n)
        return HTTP_PARSE_MORE;
    size_t t = ++i;
    while (i < n && is_target_char((unsigned char)l[i]))
        i++;
    if (i - t > HTTP_MAX_TARGET)
        return 414;
    if (i == n)
        return HTTP_PARSE_MORE;
    if (i == t || l[i] != ' ')
        return 400;
    for (size_t k = 0; ++i < n; k++) {
        char c = l[i];
        bool ok = k >= sizeof version - 1 ? false
                  : version[k] == 'd'     ? is_digit((unsigned char)c)
                                          : c == version[k];
        if (!ok)
            return 400;
    }
    return HTTP_PARSE_MORE;
}

struct field_state {
    unsigned fields, hosts;
    bool close, keep_alive, has_length, coded;
};

/* Connection: a comma-separated token list (RFC 9110 7.6.1). */
static void parse_connection(const char *v, size_t n, struct field_state *st)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',' && v[i] != ' ' && v[i] != '\t')
            i++;
        if (EQUALS_NOCASE(v + s, i - s, "close"))
            st->close = true;
        else if (EQUALS_NOCASE(v + s, i - s, "keep-alive"))
            st->keep_alive = true;
    }
}

/* Content-Length = 1*DIGIT (RFC 9110 8.6); values past 10^18 saturate (the caller says 413).
 * Repeats must agree (RFC 9112 6.3 item 5). */
static int parse_content_length(const char *v, size_t n, struct field_state *st,
                                 struct http_request *req)
{
    uint64_t x = 0;
    if (n == 0)
        return 400;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit((unsigned char)v[i]))
            return 400;
        x = x > 100000000000000000ull ? UINT64_MAX : x * 10 + (uint64_t)(v[i] - '0');
    }
    if (st->has_length && x != req->content_length)
        return 400;
    st->has_length = true;
    req->content_length = x;
    return HTTP_PARSE_DONE;
}

/* field-name ":" OWS field-value OWS (RFC 9112 5), then the line end. */
static int parse_field(const char *l, size_t avail, struct field_state *st,
                       struct http_request *req, size_t *next)
{
    if (++st->fields > HTTP_MAX_FIELDS)
        return 431;
    size_t i = 0;
    while (i < avail && is_tchar((unsigned char)l[i]))
        i++;
    /* No name, whitespace before the colon (5.1) or obs-fold (5.2): all rejected. */
    if (i == 0 || i == avail || l[i] != ':')
        return 400;
    size_t name_len = i, s = i + 1, e = s + span_field_chars(l + s, avail - s);
    /* The value ends at its first byte that is no field char: that must be the line end. */
    size_t end = line_end(l + e, avail - e);
    if (end == 0)
        return 400;
    *next = e + end;
    while (s < e && (l[s] == ' ' || l[s] == '\t'))
        s++;
    while (e > s && (l[e - 1] == ' ' || l[e - 1] == '\t'))
        e--;
    if (EQUALS_NOCASE(l, name_len, "host"))
        st->hosts++;
    else if (EQUALS_NOCASE(l, name_len, "connection"))
        parse_connection(l + s, e - s, st);
    else if (EQUALS_NOCASE(l, name_len, "content-length"))
        return parse_content_length(l + s, e - s, st, req);
    else if (EQUALS_NOCASE(l, name_len, "transfer-encoding"))
        st->coded = true;
    return HTTP_PARSE_DONE;
}

/* The checks of a whole head once its lines parsed (st), and the request's last fields. */
static int finish_head(const struct field_state *st, size_t end, struct http_request *req)
{
    if (st->hosts > 1 || (req->version_minor == 1 && st->hosts == 0))
        return 400; /* RFC 9112 3.2 */
    if (st->coded)
        return st->has_length ? 400 : 501; /* RFC 9112 6.1, 6.3 item 3 */
    req->keep_alive = req->version_minor == 1 ? !st->close : st->keep_alive && !st->close;
    req->head_len = end;
    return HTTP_PARSE_DONE;
}

/* Parses the head at b[lead..len) line by line, each line's end found by its parser (above), so
 * a head seen for the first time is read once: searching for its end first (find_head_end),
 * then parsing its lines, read it twice (issue 16: memchr was 5% of nhttpd's work per
 * request). Returns what finding the end and then parsing would, with *end the head's end (0:
 * incomplete, *scanned then where the scan stopped, as find_head_end leaves it): a head longer
 * than HTTP_MAX_HEAD is 431 whatever its lines hold, else the first line's error, else the
 * whole head's. */
static int parse_in_one_pass(const char *b, size_t len, size_t lead, size_t *scanned,
                             size_t *end, struct http_request *req)
{
    struct field_state st = {0};
    int r = HTTP_PARSE_DONE;
    size_t pos = lead;
    for (;;) {
        const char *l = b + pos;
        size_t avail = len - pos, next = pos > lead ? line_end(l, avail) : 0;
        if (next != 0) { /* the empty line ending the head */
            *end = pos + next;
            if (*end > HTTP_MAX_HEAD)
                return 431;
            return r != HTTP_PARSE_DONE ? r : finish_head(&st, *end, req);
        }
        if (r == HTTP_PARSE_DONE)
            r = pos == lead ? parse_request_line(l, avail, req, &next)
                            : parse_field(l, avail, &st, req, &next);
        if (next == 0) { /* a line with an error, or incomplete */
            const char *nl = memchr(l, '\n', avail);
            if (nl == NULL) {
                *scanned = pos;
                *end = 0;
                return HTTP_PARSE_MORE;
            }
            next = (size_t)(nl - l) + 1;
        }
        pos += next;
    }
}

int http_parse(const char *buf, size_t len, size_t *scanned, struct http_request *req)
{
    memset(req, 0, sizeof *req);
    size_t lead = skip_empty_lines(buf, len), end;
    if (*scanned <= lead) {
        int r = parse_in_one_pass(buf, len, lead, scanned, &end, req);
        if (end != 0)
            return r;
        memset(req, 0, sizeof *req); /* an incomplete head: judged below as before */
    } else {
        end = find_head_end(buf, len, lead, scanned);
        if (end > HTTP_MAX_HEAD)
            return 431;
        if (end != 0) { /* the head is b[lead..end): parsed as one seen whole */
            size_t unused;
            return parse_in_one_pass(buf, end, lead, &unused, &end, req);
        }
    }
    const char *l = buf + lead, *nl = memchr(l, '\n', len - lead);
    size_t unused = 0;
    int r = nl == NULL ? check_partial_line(l, len - lead)
                       : parse_request_line(l, (size_t)(nl - l) + 1, req, &unused);
    if (r != HTTP_PARSE_DONE && r != HTTP_PARSE_MORE)
        return r;
    return len >= HTTP_MAX_HEAD ? 431 : HTTP_PARSE_MORE;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = lower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Absolute-form (RFC 9112 3.2.2): drop "http://authority" and keep its path ("/" if none). */
static bool strip_absolute_form(const char **t, size_t *len)
{
    size_t s = *len >= 7 && EQUALS_NOCASE(*t, 7, "http://")    ? 7
               : *len >= 8 && EQUALS_NOCASE(*t, 8, "https://") ? 8
                                                               : 0;
    if (s == 0)
        return false;
    const char *slash = memchr(*t + s, '/', *len - s);
    if (slash == NULL) {
        *t = "/";
        *len = 1;
    } else {
        *len -= (size_t)(slash - *t);
        *t = slash;
    }
    return true;
}

/* Decodes one segment t[*i..) up to the next '/' into out[*o..). */
static int decode_segment(const char *t, size_t len, size_t *i, char *out, size_t *o, size_t cap)
{
    while (*i < len && t[*i] != '/') {
        int c = (unsigned char)t[*i];
        if (c == '%') {
            int hi = *i + 2 < len ? hex_value(t[*i + 1]) : -1;
            int lo = hi >= 0 ? hex_value(t[*i + 2]) : -1;
            if (lo < 0)
                return -400;
            c = hi * 16 + lo;
            *i += 2;
        }
        /* A decoded NUL ends C strings early and a decoded '/' would make a segment "..%2f";
         * '#' cannot be in a request-target (RFC 9112 3.2). */
        if (c == 0 || c == '/' || c == '#' || *o + 2 >= cap)
            return -400;
        out[(*o)++] = (char)c;
        (*i)++;
    }
    return 0;
}

/* The usual target: origin-form, with no byte that decoding or the query would change ('%',
 * '?', '#', NUL) and no empty, "." or ".." segment (no "//", no "/."). The general path below
 * would return it unchanged, so it is copied as it is: one look at each byte instead of three
 * (issue 16). Every byte looked for is at most '?', so one compare passes the letters, most of
 * a path: "/index.html" cost 163 instructions, 95 with it. (Words of eight bytes cost more:
 * 54 instructions a word, for four byte tests and the pairs test, over seven new bytes.) */
static bool is_plain_path(const char *t, size_t len)
{
    if (len == 0 || t[0] != '/')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = t[i];
        if ((unsigned char)c > '?')
            continue;
        if (c == '%' || c == '?' || c == '#' || c == '\0')
            return false;
        if (c == '/' && i + 1 < len && (t[i + 1] == '/' || t[i + 1] == '.'))
            return false;
    }
    return true;
}

int http_normalize_path(const char *t, size_t len, char *out, size_t cap)
{
    if (len + 2 < cap && len < INT32_MAX && is_plain_path(t, len)) {
        memcpy(out, t, len);
        out[len] = '\0';
        return (int)len;
    }
    if ((len == 0 || t[0] != '/') && !strip_absolute_form(&t, &len))
        return -400;
    const char *q = memchr(t, '?', len);
    if (q != NULL)
        len = (size_t)(q - t);
    if (cap < 2)
        return -400;
    /* Invariant: out[0..o) is a normalized path ending in '/'. */
    size_t o = 1, i = 1;
    out[0] = '/';
    while (i <= len) {
        size_t seg = o;
        if (decode_segment(t, len, &i, out, &o, cap) != 0)
            return -400;
        bool last = i >= len;
        size_t n = o - seg;
        if (n == 1 && out[seg] == '.') {
            o = seg;
        } else if (n == 2 && out[seg] == '.' && out[seg + 1] == '.') {
            if (seg == 1)
                return -400; /* above the root */
            for (o = seg - 1; out[o - 1] != '/'; o--)
                ;
        } else if (n > 0 && !last) {
            out[o++] = '/';
        }
        i++;
    }
    out[o] = '\0';
    return (int)o;
}

const char *http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}
