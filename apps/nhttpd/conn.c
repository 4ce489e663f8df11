/* conn.c: one HTTP connection (conn.h): read, parse, answer in order, write, time out. */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "docstore.h"
#include "http.h"
#include "json.h"
#include "platform.h"
#include "poller.h"
#include "server.h"
#include "stats.h"

/* Room every response head, error or stats document needs in the output buffer; with less,
 * the queued responses are written first (so ~40 pipelined 175-byte answers share a write). */
#define OUT_RESERVE    4608
#define STATS_JSON_MAX 4096
#define STATS_PATH     "/nom/stats"
#define BOARD_PATH     "/nom/board"
#define WRITE_SLICE    (1u << 20) /* most of a memory-resident body handed to one writev */

struct conn {
    struct server *srv;
    int fd;
    unsigned interest;        /* POLLER_IN or POLLER_OUT as registered */
    char *in;                 /* pending input in[in_off..in_len), HTTP_MAX_HEAD bytes */
    size_t in_off, in_len, scanned;
    char *out;                /* queued output out[out_off..out_len), CONN_OUT_BYTES */
    size_t out_off, out_len;
    struct doc body;          /* a body too big for out, sent after it */
    uint64_t body_off;        /* bytes of body sent (memory) or read into out (file) */
    bool body_open;
    uint64_t discard;         /* request body bytes still to skip */
    bool close_after;         /* close once the queued output is written */
    bool keep_alive_10;       /* an HTTP/1.0 client asked for keep-alive: say yes */
    bool peer_eof;
    bool lingering;           /* answered and shut down for writing; draining until EOF */
    uint64_t deadline_ms;
    struct conn *prev, *next; /* the server's deadline queue */
};

/* ---- the deadline queue (conn.h "Timeout") ---- */

static void queue_unlink(struct conn *c)
{
    struct server *s = c->srv;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->oldest = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    else
        s->newest = c->prev;
    c->prev = c->next = NULL;
}

static void queue_append(struct conn *c)
{
    struct server *s = c->srv;
    c->prev = s->newest;
    if (s->newest != NULL)
        s->newest->next = c;
    else
        s->oldest = c;
    s->newest = c;
}

/* A new deadline, idle_timeout_ms from now: the latest of all, so the connection goes last. */
static void touch(struct conn *c)
{
    c->deadline_ms = c->srv->now_ms + c->srv->cfg.idle_timeout_ms;
    if (c->srv->newest != c) {
        queue_unlink(c);
        queue_append(c);
    }
}

int conn_next_timeout_ms(const struct server *s, uint64_t now_ms)
{
    if (s->oldest == NULL)
        return -1;
    return s->oldest->deadline_ms <= now_ms ? 0 : (int)(s->oldest->deadline_ms - now_ms);
}

/* ---- life cycle ---- */

int conn_open(struct server *s, int fd)
{
    int one = 1, flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -errno;
    /* Responses are written whole; Nagle would only hold back the tail of a pipelined batch. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -ENOMEM;
    *c = (struct conn){.srv = s, .fd = fd, .interest = POLLER_IN, .body.handle = -1};
    int r = poller_add(s->poller, fd, POLLER_IN, c);
    if (r != 0) {
        free(c);
        return r;
    }
    queue_append(c);
    c->deadline_ms = s->now_ms + s->cfg.idle_timeout_ms;
    s->nconns++;
    s->stats.conns_open++;
    s->stats.conns_accepted++;
    return 0;
}

static void conn_close(struct conn *c)
{
    struct server *s = c->srv;
    poller_remove(s->poller, c->fd);
    close(c->fd);
    bufpool_put(&s->in_pool, c->in);
    bufpool_put(&s->out_pool, c->out);
    if (c->body_open)
        docstore_close(&c->body);
    queue_unlink(c);
    free(c);
    s->nconns--;
    s->stats.conns_open--;
    s->stats.conns_closed++;
    server_conn_closed(s);
}

static void set_interest(struct conn *c, unsigned events)
{
    if (c->interest != events) {
        c->interest = events;
        poller_modify(c->srv->poller, c->fd, events, c);
    }
}

static void release_empty_buffers(struct conn *c)
{
    if (c->in != NULL && c->in_off == c->in_len) {
        bufpool_put(&c->srv->in_pool, c->in);
        c->in = NULL;
        c->in_off = c->in_len = c->scanned = 0;
    }
    if (c->out != NULL && c->out_off == c->out_len && !c->body_open) {
        bufpool_put(&c->srv->out_pool, c->out);
        c->out = NULL;
        c->out_off = c->out_len = 0;
    }
}

/* After a response that ends the connection: stop sending, keep reading until the client
 * closes (or the deadline), so unread request bytes cannot make our close a reset that
 * destroys the response before the client reads it (RFC 9112 9.6). */
static void linger(struct conn *c)
{
    shutdown(c->fd, SHUT_WR);
    c->lingering = true;
    c->in_off = c->in_len;
    release_empty_buffers(c);
    set_interest(c, POLLER_IN);
}

static void drain(struct conn *c)
{
    char sink[4096];
    for (int i = 0; i < 16; i++) { /* bounded work per wakeup */
        ssize_t n = read(c->fd, sink, sizeof sink);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        conn_close(c);
        return;
    }
}

/* ---- responses ---- */

static size_t out_room(const struct conn *c) { return CONN_OUT_BYTES - c->out_len; }

/* Appends to the output. It fits: produce() keeps OUT_RESERVE free, more than a head plus a
 * small body (respond_doc checks bigger ones); bounded all the same. */
static void queue_bytes(struct conn *c, const void *p, size_t n)
{
    size_t room = out_room(c);
    n = n < room ? n : room;
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

/* The head is assembled by hand, not with snprintf: newlib's vfprintf was 16% of nhttpd's
 * guest instructions per request on nom (tools/bench/insn_profile.py). */
static void put_str(struct conn *c, const char *s) { queue_bytes(c, s, strlen(s)); }
/* A string literal, its length known at compile time (strlen was 1.5% per request). */
#define put_lit(c, lit) queue_bytes((c), "" lit, sizeof(lit) - 1)

static void put_uint(struct conn *c, uint64_t v)
{
    char digits[20];
    size_t i = sizeof digits;
    do
        digits[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    queue_bytes(c, digits + i, sizeof digits - i);
}

/* The head of a response of status with a body of length bytes of type, plus the extra
 * fields (CRLF-terminated lines, or ""). type and extra must live as long as the program and
 * never change: the server's head_cache compares them by address. */
static void queue_head(struct conn *c, int status, const char *type, uint64_t length,
                       const char *extra)
{
    const char *connection = c->close_after     ? "Connection: close\r\n"
                             : c->keep_alive_10 ? "Connection: keep-alive\r\n"
                                                : "";
    struct head_cache *h = &c->srv->last_head;
    if (h->len != 0 && h->status == status && h->length == length && h->type == type &&
        h->extra == extra && h->connection == connection) {
        queue_bytes(c, h->bytes, h->len);
        return;
    }
    size_t start = c->out_len;
    put_lit(c, "HTTP/1.1 ");
    put_uint(c, (uint64_t)status);
    put_lit(c, " ");
    put_str(c, http_reason(status));
    put_lit(c, "\r\nServer: nhttpd\r\nContent-Type: ");
    put_str(c, type);
    put_lit(c, "\r\nContent-Length: ");
    put_uint(c, length);
    put_lit(c, "\r\n");
    put_str(c, extra);
    put_str(c, connection);
    put_lit(c, "\r\n");
    size_t n = c->out_len - start;
    h->len = 0;
    if (n <= sizeof h->bytes && c->out_len < CONN_OUT_BYTES) { /* whole: not cut by out_room */
        *h = (struct head_cache){.status = status, .length = length, .type = type,
                                 .extra = extra, .connection = connection, .len = n};
        memcpy(h->bytes, c->out + start, n);
    }
}

static int respond_error(struct conn *c, int status, bool head_only)
{
    char body[64];
    int n = snprintf(body, sizeof body, "%d %s\n", status, http_reason(status));
    queue_head(c, status, "text/plain", (uint64_t)n,
               status == 405 ? "Allow: GET, HEAD\r\n" : "");
    if (!head_only)
        queue_bytes(c, body, (size_t)n);
    return status;
}

/* A JSON document of n bytes (n < 0: it did not fit, a 500), never cached. */
static int respond_json(struct conn *c, const char *json, long n, bool head_only)
{
    if (n < 0)
        return respond_error(c, 500, head_only);
    queue_head(c, 200, "application/json", (uint64_t)n, "Cache-Control: no-store\r\n");
    if (!head_only)
        queue_bytes(c, json, (size_t)n);
    return 200;
}

static int respond_stats(struct conn *c, bool head_only)
{
    struct server *s = c->srv;
    char json[STATS_JSON_MAX];
    s->stats.buffers_in_use = s->in_pool.in_use + s->out_pool.in_use;
    s->stats.buffers_peak = s->in_pool.peak + s->out_pool.peak;
    s->stats.buffer_failures = s->in_pool.failures + s->out_pool.failures;
    long n = stats_render(&s->stats, platform_ticks(), json, sizeof json);
    return respond_json(c, json, n, head_only);
}

/* The bulletin board's read-only export (platform.h); no state changes, unlike /nom/stats. */
static int respond_board(struct conn *c, bool head_only)
{
    char buf[STATS_JSON_MAX];
    struct json j;
    json_init(&j, buf, sizeof buf);
    json_object_begin(&j, NULL);
    platform_board_json(&j);
    json_object_end(&j);
    return respond_json(c, buf, json_finish(&j), head_only);
}

static int respond_doc(struct conn *c, const char *path, size_t len, bool head_only)
{
    struct doc d;
    int r = docstore_open(path, len, &d);
    if (r < 0)
        return respond_error(c, r == -ENOENT || r == -EACCES ? 404 : 503, head_only);
    queue_head(c, 200, d.content_type, d.size, "");
    if (head_only) {
        docstore_close(&d);
    } else if (d.bytes != NULL && d.size <= out_room(c)) {
        queue_bytes(c, d.bytes, (size_t)d.size); /* small: copy, to share the write */
        docstore_close(&d);
    } else {
        c->body = d; /* big: written after the head, straight from the store */
        c->body_off = 0;
        c->body_open = true;
    }
    return 200;
}

/* Answers one parsed request; returns the status sent. */
static int respond(struct conn *c, const struct http_request *req)
{
    bool head_only = req->method == HTTP_HEAD;
    char path[HTTP_MAX_TARGET + 1];
    c->close_after = !req->keep_alive;
    c->keep_alive_10 = req->keep_alive && req->version_minor == 0;
    if (req->content_length > CONN_MAX_BODY) {
        c->close_after = true; /* we will not read that much to find the next request */
        return respond_error(c, 413, head_only);
    }
    c->discard = req->content_length;
    if (req->method == HTTP_KNOWN_OTHER)
        return respond_error(c, 405, head_only);
    if (req->method == HTTP_UNKNOWN)
        return respond_error(c, 501, head_only);
    int n = http_normalize_path(req->target, req->target_len, path, sizeof path);
    if (n < 0)
        return respond_error(c, 400, head_only);
    /* The length first: a document's path rarely has the same, so no compare runs. */
    if ((size_t)n == sizeof STATS_PATH - 1 && memcmp(path, STATS_PATH, (size_t)n) == 0)
        return respond_stats(c, head_only);
    if ((size_t)n == sizeof BOARD_PATH - 1 && memcmp(path, BOARD_PATH, (size_t)n) == 0)
        return respond_board(c, head_only);
    return respond_doc(c, path, (size_t)n, head_only);
}

/* ---- the request/response cycle ---- */

/* Drops request body bytes; true once none is left to drop. */
static bool skip_body(struct conn *c)
{
    size_t avail = c->in != NULL ? c->in_len - c->in_off : 0;
    size_t n = avail < c->discard ? avail : (size_t)c->discard;
    c->in_off += n;
    c->discard -= n;
    return c->discard == 0;
}

/* Answers the complete requests in the input buffer while responses fit. Returns how many it
 * answered, or -1 if the connection must close (no output buffer to answer with). */
static int produce(struct conn *c)
{
    int answered = 0;
    while (!c->body_open && !c->close_after && skip_body(c)) {
        struct http_request req;
        size_t avail = c->in != NULL ? c->in_len - c->in_off : 0;
        if (avail == 0 || (c->out != NULL && out_room(c) < OUT_RESERVE))
            break;
        int r = http_parse(c->in + c->in_off, avail, &c->scanned, &req);
        if (r == HTTP_PARSE_MORE)
            break;
        if (c->out == NULL && (c->out = bufpool_get(&c->srv->out_pool)) == NULL)
            return -1;
        uint64_t t0 = platform_ticks(); /* latency: request parsed ... */
        int status;
        if (r == HTTP_PARSE_DONE) {
            c->in_off += req.head_len;
            c->scanned = 0;
            status = respond(c, &req);
        } else {
            c->close_after = true; /* framing is lost: answer, then close */
            c->in_off = c->in_len;
            status = respond_error(c, r, false);
        }
        stats_response(&c->srv->stats, status, platform_ticks() - t0); /* ... response queued */
        answered++;
    }
    return answered;
}

enum flush_result { FLUSH_DONE, FLUSH_AGAIN, FLUSH_ERROR };

/* Moves the next chunk of a file body into the empty output buffer. */
static bool refill(struct conn *c)
{
    uint64_t left = c->body.size - c->body_off;
    ssize_t n = docstore_read(&c->body, c->body_off, c->out,
                              left < CONN_OUT_BYTES ? (size_t)left : CONN_OUT_BYTES);
    if (n <= 0)
        return false; /* the head promised more bytes: all we can do is close */
    c->out_off = 0;
    c->out_len = (size_t)n;
    c->body_off += (uint64_t)n;
    return true;
}

static void consumed(struct conn *c, size_t n)
{
    size_t from_out = c->out_len - c->out_off < n ? c->out_len - c->out_off : n;
    c->out_off += from_out;
    c->body_off += n - from_out; /* the rest came from a memory-resident body */
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
}

/* Writes queued output and body until done or the socket is full. */
static enum flush_result flush(struct conn *c)
{
    for (;;) {
        struct iovec iov[2];
        int n = 0;
        size_t pending = c->out != NULL ? c->out_len - c->out_off : 0;
        if (c->body_open && c->body_off == c->body.size && (c->body.bytes != NULL || !pending)) {
            docstore_close(&c->body);
            c->body_open = false;
        }
        if (c->body_open && c->body.bytes == NULL && pending == 0) {
            if (!refill(c))
                return FLUSH_ERROR;
            continue;
        }
        if (pending > 0)
            iov[n++] = (struct iovec){c->out + c->out_off, pending};
        if (c->body_open && c->body.bytes != NULL) {
            uint64_t left = c->body.size - c->body_off;
            iov[n++] = (struct iovec){(void *)(c->body.bytes + c->body_off),
                                      left < WRITE_SLICE ? (size_t)left : WRITE_SLICE};
        }
        if (n == 0)
            return FLUSH_DONE;
        ssize_t w = writev(c->fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? FLUSH_AGAIN : FLUSH_ERROR;
        stats_sent(&c->srv->stats, (uint64_t)w);
        touch(c); /* progress; after the last write, the next request's time starts here */
        consumed(c, (size_t)w);
    }
}

/* Answers and writes until the connection waits for input or for the socket. */
static void run(struct conn *c)
{
    for (;;) {
        /* Held back by a body or a full buffer: once written, buffered requests may be due. */
        bool held = c->body_open || (c->out != NULL && out_room(c) < OUT_RESERVE);
        int answered = produce(c);
        enum flush_result r = answered < 0 ? FLUSH_ERROR : flush(c);
        if (r == FLUSH_ERROR) {
            conn_close(c);
            return;
        }
        if (r == FLUSH_AGAIN) {
            set_interest(c, POLLER_OUT);
            return;
        }
        if (c->close_after) {
            linger(c);
            return;
        }
        if (answered == 0 && !held)
            break;
    }
    if (c->peer_eof) {
        conn_close(c); /* a partial request left by a closed client is dropped */
        return;
    }
    release_empty_buffers(c);
    set_interest(c, POLLER_IN);
}

static void on_readable(struct conn *c)
{
    if (c->in == NULL) {
        if ((c->in = bufpool_get(&c->srv->in_pool)) == NULL) {
            conn_close(c);
            return;
        }
        c->in_off = c->in_len = c->scanned = 0;
    } else if (c->in_off > 0) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    /* Never full here: a full buffer without a complete head was answered with 431. */
    ssize_t n = read(c->fd, c->in + c->in_len, HTTP_MAX_HEAD - c->in_len);
    if (n > 0) {
        c->in_len += (size_t)n;
    } else if (n == 0) {
        c->peer_eof = true;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        release_empty_buffers(c);
        return;
    } else {
        conn_close(c);
        return;
    }
    run(c);
}

void conn_handle(struct conn *c, unsigned events)
{
    if (c->interest & POLLER_OUT) {
        if (events & (POLLER_OUT | POLLER_ERR))
            run(c);
    } else if (events & (POLLER_IN | POLLER_ERR)) {
        if (c->lingering)
            drain(c);
        else
            on_readable(c);
    }
}

void conn_expire(struct server *s, uint64_t now_ms)
{
    static const char timeout[] = "HTTP/1.1 408 Request Timeout\r\nServer: nhttpd\r\n"
                                  "Content-Length: 0\r\nConnection: close\r\n\r\n";
    while (s->oldest != NULL && s->oldest->deadline_ms <= now_ms) {
        struct conn *c = s->oldest;
        bool partial = (c->in != NULL && c->in_len > c->in_off) || c->discard > 0;
        if (partial && !c->lingering && c->out == NULL)
            (void)!write(c->fd, timeout, sizeof timeout - 1); /* best effort: we close anyway */
        s->stats.conns_timed_out++;
        conn_close(c);
    }
}
