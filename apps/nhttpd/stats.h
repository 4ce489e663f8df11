/*
 * stats.h: what nhttpd measures about itself, and the JSON of GET /nom/stats.
 *
 * Contract: latency is measured in the server, from a request parsed to its response queued
 * (platform ticks: the TSC on nom, CLOCK_MONOTONIC on Linux), into a log-linear histogram
 * (16 sub-buckets per power of two: p99 is exact to within 1/16 of its value) plus the sums
 * that give the mean and variance (jitter = standard deviation, paper 3.6). Two windows are
 * reported: since the start, and since the previous stats query (each query closes its
 * interval and opens the next, so a benchmark reading /nom/stats before and after a run gets
 * exactly that run). Throughput counts response bytes actually written to sockets.
 */
#ifndef NHTTPD_STATS_H
#define NHTTPD_STATS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_HIST_BUCKETS 976 /* 16 exact + 16 per power of two from 2^4 to 2^63 */

struct latency_hist {
    uint64_t count;
    uint64_t sum_ns;
    unsigned __int128 sum_sq_ns; /* of each sample squared: exact, whatever the count */
    uint64_t max_ns;
    uint64_t buckets[STATS_HIST_BUCKETS];
};

struct stats_window {
    uint64_t start_ticks;
    uint64_t requests;
    uint64_t bytes_sent;
    uint64_t by_class[6]; /* responses by status class: [2] = 2xx ... [5] = 5xx */
    struct latency_hist latency;
};

struct stats {
    double ns_per_tick;
    /* Responses are counted once, in total; the interval window is worked out when rendered,
     * as total minus since (total as it was at the interval's start, which is since's
     * start_ticks), with the one figure a difference cannot give kept apart: its maximum.
     * Counting in both windows, Welford's mean in doubles, cost 112 instructions per request;
     * once, in integers, 46 (issue 16). */
    struct stats_window total, since;
    uint64_t interval_max_ns;
    uint64_t conns_accepted, conns_closed, conns_timed_out;
    uint64_t accept_paused; /* times the listener stopped accepting (connection or fd limit) */
    uint64_t accept_errors;
    uint64_t conns_open;
    uint64_t max_conns;
    /* Buffer pool figures, copied in by the server before rendering. */
    uint64_t buffers_in_use, buffers_peak, buffer_failures;
};

/* Starts both windows at now_ticks; ticks_per_sec > 0. */
void stats_start(struct stats *s, uint64_t now_ticks, uint64_t ticks_per_sec);

/* One response queued: its status and the ticks from request parsed to response queued. */
void stats_response(struct stats *s, int status, uint64_t latency_ticks);

/* Response bytes written to a socket. */
void stats_sent(struct stats *s, uint64_t bytes);

/* Writes the stats document into buf and starts a new interval. Returns its length, or -1 if
 * cap is too small. The platform adds its own members (platform_stats_json). */
long stats_render(struct stats *s, uint64_t now_ticks, char *buf, size_t cap);

/* The value at quantile q (0..1) of a histogram, in ns (a bucket's midpoint); 0 if empty. */
double stats_quantile_ns(const struct latency_hist *h, double q);

/* The mean of a histogram's samples, and their standard deviation (the sample form, n - 1),
 * in ns; 0 without samples (the deviation: without two). */
double stats_mean_ns(const struct latency_hist *h);
double stats_stddev_ns(const struct latency_hist *h);

#endif /* NHTTPD_STATS_H */
