/*
 * server.h: nhttpd's event loop: one thread, one core, run to completion per request.
 *
 * Contract: server_run owns the calling thread until a fatal error. Connections are accepted
 * while fewer than max_conns are open; at the limit (or when the system runs out of
 * descriptors) the listener is taken out of the poll set, so excess clients wait in the
 * listen backlog instead of costing memory (accept backpressure), and it comes back when a
 * connection closes (or after ACCEPT_RETRY_MS for descriptor exhaustion).
 */
#ifndef NHTTPD_SERVER_H
#define NHTTPD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool.h"
#include "stats.h"

struct server_config {
    const char *bind_addr;    /* IPv4 dotted quad */
    unsigned port;            /* 0: any (the chosen port is printed) */
    unsigned idle_timeout_ms; /* see conn.h for what the timeout covers */
    unsigned max_conns;
    size_t buffer_bytes;      /* cap on all connection buffers together */
};

struct conn;
struct poller;

/* The last response head conn.c assembled and what it was made from (conn.c, queue_head):
 * clients asking for the same document again and again, the common case, get a copy of the
 * same bytes instead of a head put together piece by piece (417 guest instructions a request,
 * 4.6% of nhttpd's work on nom: tools/bench/per_request.py). */
#define HEAD_CACHE_BYTES 256
struct head_cache {
    int status;
    uint64_t length;
    /* Compared by address: literals and mime.c's table, which live as long as the program
     * and never change (queue_head's contract). */
    const char *type, *extra, *connection;
    size_t len; /* 0: nothing cached */
    char bytes[HEAD_CACHE_BYTES];
};

struct server {
    struct server_config cfg;
    int listen_fd;
    bool accepting;         /* the listener is in the poll set */
    uint64_t accept_retry_ms; /* when to try again after running out of descriptors; 0: none */
    struct poller *poller;
    struct bufpool in_pool, out_pool;
    struct stats stats;
    struct conn *oldest, *newest; /* open connections by deadline (conn.c) */
    unsigned nconns;
    uint64_t now_ms;          /* the loop's clock, read once per wakeup */
    struct head_cache last_head;
};

/* Binds and listens, and prints "nhttpd: listening on ADDR:PORT". Returns 0 or -1 (printed). */
int server_open(struct server *s, const struct server_config *cfg);

/* Runs the loop. Returns only on a fatal poll error (-errno). */
int server_run(struct server *s);

/* A connection closed: the server may accept again. Called by conn.c. */
void server_conn_closed(struct server *s);

/* The clock server.now_ms is read from. */
uint64_t server_clock_ms(void);

#endif /* NHTTPD_SERVER_H */
