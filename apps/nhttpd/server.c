/* server.c: nhttpd's listener and event loop (server.h). */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "http.h"
#include "platform.h"
#include "poller.h"

#define LISTEN_BACKLOG  1024
#define ACCEPT_BATCH    64  /* accepts per wakeup: new clients cannot starve open ones */
#define ACCEPT_RETRY_MS 100 /* pause after running out of descriptors or memory */
#define EVENT_BATCH     256
#define FD_RESERVE      32  /* descriptors kept for the listener, the poller, stdio, files */

uint64_t server_clock_ms(void)
{
    return platform_ticks() / (platform_ticks_per_sec() / 1000);
}

static int listen_socket(const struct server_config *cfg, unsigned *port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    socklen_t alen = sizeof a;
    int one = 1;
    if (inet_pton(AF_INET, cfg->bind_addr, &a.sin_addr) != 1) {
        fprintf(stderr, "nhttpd: --bind=%s is not an IPv4 address\n", cfg->bind_addr);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        perror("nhttpd: socket");
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int flags = fcntl(fd, F_GETFL, 0);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, LISTEN_BACKLOG) != 0 ||
        flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        fprintf(stderr, "nhttpd: cannot listen on %s:%u: %s\n", cfg->bind_addr, cfg->port,
                strerror(errno));
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* Admits no more connections than there are descriptors: accept backpressure then keeps the
 * excess in the listen backlog, rather than accept failing with EMFILE (on nom, whose table
 * holds 1024, that would cost the client its connection: net's accept closes it). */
static unsigned fit_descriptors(unsigned max_conns)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= (rlim_t)max_conns + FD_RESERVE)
        return max_conns;
    unsigned fit = rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)rl.rlim_cur - FD_RESERVE : FD_RESERVE;
    fprintf(stderr, "nhttpd: --max-conns lowered to %u (%llu descriptors)\n", fit,
           (unsigned long long)rl.rlim_cur);
    return fit;
}

int server_open(struct server *s, const struct server_config *cfg)
{
    unsigned port;
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->cfg.max_conns = fit_descriptors(cfg->max_conns);
    if ((s->listen_fd = listen_socket(cfg, &port)) < 0)
        return -1;
    if ((s->poller = poller_create()) == NULL ||
        poller_add(s->poller, s->listen_fd, POLLER_IN, NULL) != 0) {
        fprintf(stderr, "nhttpd: cannot create the poller\n");
        return -1;
    }
    /* As many input as output buffers: one of each per busy connection. */
    size_t pairs = cfg->buffer_bytes / (HTTP_MAX_HEAD + CONN_OUT_BYTES);
    bufpool_init(&s->in_pool, HTTP_MAX_HEAD, pairs);
    bufpool_init(&s->out_pool, CONN_OUT_BYTES, pairs);
    stats_start(&s->stats, platform_ticks(), platform_ticks_per_sec());
    s->stats.max_conns = s->cfg.max_conns;
    s->accepting = true;
    s->now_ms = server_clock_ms();
    printf("nhttpd: listening on %s:%u\n", cfg->bind_addr, port);
    fflush(stdout);
    return 0;
}

/* Puts the listener in or out of the poll set (accept backpressure, server.h). */
static void set_accepting(struct server *s, bool on)
{
    if (s->accepting == on)
        return;
    s->accepting = on;
    poller_modify(s->poller, s->listen_fd, on ? POLLER_IN : 0, NULL);
    if (!on)
        s->stats.accept_paused++;
}

void server_conn_closed(struct server *s)
{
    if (s->accept_retry_ms == 0 && s->nconns < s->cfg.max_conns)
        set_accepting(s, true);
}

/* Handles a failed accept; returns true if accepting may go on now. */
static bool accept_failed(struct server *s, int err)
{
    if (err == EINTR || err == ECONNABORTED || err == EPROTO)
        return true; /* that client is gone; others may wait */
    if (err == EAGAIN || err == EWOULDBLOCK)
        return false;
    s->stats.accept_errors++;
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        set_accepting(s, false);
        s->accept_retry_ms = s->now_ms + ACCEPT_RETRY_MS;
    }
    return false;
}

static void accept_ready(struct server *s)
{
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        if (s->nconns >= s->cfg.max_conns) {
            set_accepting(s, false);
            return;
        }
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0) {
            if (accept_failed(s, errno))
                continue;
            return;
        }
        if (conn_open(s, fd) != 0) {
            close(fd);
            s->stats.accept_errors++;
        }
    }
}

static int wait_timeout_ms(const struct server *s)
{
    int t = conn_next_timeout_ms(s, s->now_ms);
    if (s->accept_retry_ms != 0) {
        int r = s->accept_retry_ms > s->now_ms ? (int)(s->accept_retry_ms - s->now_ms) : 0;
        t = t < 0 || r < t ? r : t;
    }
    return t;
}

int server_run(struct server *s)
{
    struct poller_event ev[EVENT_BATCH];
    for (;;) {
        s->now_ms = server_clock_ms();
        int n = poller_wait(s->poller, ev, EVENT_BATCH, wait_timeout_ms(s));
        if (n < 0)
            return n;
        s->now_ms = server_clock_ms();
        for (int i = 0; i < n; i++) {
            if (ev[i].ctx == NULL)
                accept_ready(s);
            else
                conn_handle(ev[i].ctx, ev[i].events);
        }
        if (s->accept_retry_ms != 0 && s->now_ms >= s->accept_retry_ms) {
            s->accept_retry_ms = 0;
            server_conn_closed(s);
        }
        conn_expire(s, s->now_ms);
    }
}
