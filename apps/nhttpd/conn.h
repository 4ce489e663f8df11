/*
 * conn.h: one HTTP connection of nhttpd: read, parse, respond, write; keep-alive, pipelining.
 *
 * Contract: a connection owns its socket and at most one input buffer (a partial request, at
 * most HTTP_MAX_HEAD bytes) and one output buffer (CONN_OUT_BYTES of queued responses), taken
 * from the server's pools only while they hold bytes. Pipelined requests are answered in order;
 * while responses wait to be written nothing more is read, so a client that does not read
 * cannot make the server buffer more (TCP flow control pushes back instead).
 *
 * Timeout: a connection has idle_timeout_ms after it was accepted or its last response was
 * written to send a complete request head, and while a response is being written, each write
 * that makes progress grants another idle_timeout_ms. Past its deadline it is closed, with a
 * 408 if a partial request was pending. Deadlines all have the same length, so the server's
 * list ordered by deadline is a queue: O(1) per update, expiry looks only at its head.
 */
#ifndef NHTTPD_CONN_H
#define NHTTPD_CONN_H

#include <stdint.h>

#define CONN_OUT_BYTES 16384 /* output buffer: many pipelined small responses per write */
#define CONN_MAX_BODY  8192  /* request bodies nhttpd skips; larger ones are 413 */

struct conn;
struct server;

/* Takes over an accepted socket: non-blocking, TCP_NODELAY, registered for reading.
 * Returns 0 or -errno (the caller closes fd). */
int conn_open(struct server *s, int fd);

/* Handles the poller's events for a connection. May close (and free) it. */
void conn_handle(struct conn *c, unsigned events);

/* Closes every connection whose deadline is at or before now_ms. */
void conn_expire(struct server *s, uint64_t now_ms);

/* Milliseconds until the earliest deadline, or -1 if no connection is open. */
int conn_next_timeout_ms(const struct server *s, uint64_t now_ms);

#endif /* NHTTPD_CONN_H */
