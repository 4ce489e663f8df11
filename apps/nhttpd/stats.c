/* stats.c: nhttpd's counters, latency histogram and the /nom/stats document (stats.h). */
#include "stats.h"

#include <math.h>
#include <string.h>

#include "json.h"
#include "platform.h"

void stats_start(struct stats *s, uint64_t now_ticks, uint64_t ticks_per_sec)
{
    memset(s, 0, sizeof *s);
    s->ns_per_tick = 1e9 / (double)ticks_per_sec;
    s->total.start_ticks = s->since.start_ticks = now_ticks;
}

/* Values below 16 have a bucket each; above, a power of two 2^e has 16 buckets. */
static unsigned bucket_of(uint64_t ns)
{
    if (ns < 16)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns);
    return (e - 3) * 16 + (unsigned)((ns >> (e - 4)) & 15);
}

static double bucket_mid(unsigned i)
{
    if (i < 16)
        return i;
    unsigned e = i / 16 + 3, sub = i % 16;
    double width = ldexp(1.0, (int)e - 4);
    return (16 + sub) * width + width / 2;
}

/* Sums in integers, not Welford's running mean in doubles: fewer instructions, and a difference
 * of two states is the histogram of the samples between them (the interval window). */
static void hist_add(struct latency_hist *h, uint64_t ns)
{
    h->count++;
    h->sum_ns += ns;
    h->sum_sq_ns += (unsigned __int128)ns * ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
    h->buckets[bucket_of(ns)]++;
}

double stats_quantile_ns(const struct latency_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->count), seen = 0;
    if (rank == 0)
        rank = 1;
    for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            double mid = bucket_mid(i);
            return mid < (double)h->max_ns ? mid : (double)h->max_ns;
        }
    }
    return (double)h->max_ns;
}

double stats_mean_ns(const struct latency_hist *h)
{
    return h->count > 0 ? (double)h->sum_ns / (double)h->count : 0;
}

/* The sum of squared deviations is sum_sq - sum * mean, from exact sums: in doubles, its error is
 * a few units in the last place of sum_sq, far below the deviations' squares. */
double stats_stddev_ns(const struct latency_hist *h)
{
    if (h->count < 2)
        return 0;
    double m2 = (double)h->sum_sq_ns - (double)h->sum_ns * stats_mean_ns(h);
    return m2 > 0 ? sqrt(m2 / (double)(h->count - 1)) : 0;
}

void stats_response(struct stats *s, int status, uint64_t latency_ticks)
{
    uint64_t ns = (uint64_t)((double)latency_ticks * s->ns_per_tick);
    s->total.requests++;
    s->total.by_class[status / 100 < 6 ? status / 100 : 5]++;
    hist_add(&s->total.latency, ns);
    if (ns > s->interval_max_ns)
        s->interval_max_ns = ns;
}

void stats_sent(struct stats *s, uint64_t bytes)
{
    s->total.bytes_sent += bytes;
}

/* Turns w, a window's earlier state, into the window of what now counted since then. */
static void window_since(struct stats_window *w, const struct stats_window *now)
{
    w->requests = now->requests - w->requests;
    w->bytes_sent = now->bytes_sent - w->bytes_sent;
    for (size_t i = 0; i < sizeof w->by_class / sizeof w->by_class[0]; i++)
        w->by_class[i] = now->by_class[i] - w->by_class[i];
    struct latency_hist *h = &w->latency;
    h->count = now->latency.count - h->count;
    h->sum_ns = now->latency.sum_ns - h->sum_ns;
    h->sum_sq_ns = now->latency.sum_sq_ns - h->sum_sq_ns;
    for (size_t i = 0; i < STATS_HIST_BUCKETS; i++)
        h->buckets[i] = now->latency.buckets[i] - h->buckets[i];
}

static void render_latency(struct json *j, const struct latency_hist *h)
{
    json_object_begin(j, "latency_us");
    json_uint(j, "samples", h->count);
    json_double(j, "mean", stats_mean_ns(h) / 1e3);
    json_double(j, "p99", stats_quantile_ns(h, 0.99) / 1e3);
    json_double(j, "stddev", stats_stddev_ns(h) / 1e3);
    json_double(j, "max", (double)h->max_ns / 1e3);
    json_object_end(j);
}

static void render_window(struct json *j, const char *key, const struct stats_window *w,
                          double seconds)
{
    json_object_begin(j, key);
    json_double(j, "seconds", seconds);
    json_uint(j, "requests", w->requests);
    json_object_begin(j, "responses");
    json_uint(j, "2xx", w->by_class[2]);
    json_uint(j, "3xx", w->by_class[3]);
    json_uint(j, "4xx", w->by_class[4]);
    json_uint(j, "5xx", w->by_class[5]);
    json_object_end(j);
    json_uint(j, "bytes_sent", w->bytes_sent);
    json_object_begin(j, "throughput");
    json_double(j, "requests_per_s", seconds > 0 ? (double)w->requests / seconds : 0);
    json_double(j, "mbit_per_s", seconds > 0 ? (double)w->bytes_sent * 8 / 1e6 / seconds : 0);
    json_object_end(j);
    render_latency(j, &w->latency);
    json_object_end(j);
}

static void render_connections(struct json *j, const struct stats *s)
{
    json_object_begin(j, "connections");
    json_uint(j, "open", s->conns_open);
    json_uint(j, "max", s->max_conns);
    json_uint(j, "accepted", s->conns_accepted);
    json_uint(j, "closed", s->conns_closed);
    json_uint(j, "timed_out", s->conns_timed_out);
    json_uint(j, "accept_paused", s->accept_paused);
    json_uint(j, "accept_errors", s->accept_errors);
    json_object_end(j);
    json_object_begin(j, "buffers");
    json_uint(j, "in_use", s->buffers_in_use);
    json_uint(j, "peak", s->buffers_peak);
    json_uint(j, "refused", s->buffer_failures);
    json_object_end(j);
}

long stats_render(struct stats *s, uint64_t now_ticks, char *buf, size_t cap)
{
    struct json j;
    double total_s = (double)(now_ticks - s->total.start_ticks) * s->ns_per_tick / 1e9;
    double interval_s = (double)(now_ticks - s->since.start_ticks) * s->ns_per_tick / 1e9;
    json_init(&j, buf, cap);
    json_object_begin(&j, NULL);
    json_string(&j, "server", "nhttpd");
    platform_stats_json(&j);
    json_uint(&j, "requests", s->total.requests);
    render_window(&j, "total", &s->total, total_s);
    window_since(&s->since, &s->total); /* since is the interval now, until the copy below */
    s->since.latency.max_ns = s->interval_max_ns;
    render_window(&j, "interval", &s->since, interval_s);
    render_connections(&j, s);
    json_object_end(&j);
    s->since = s->total;
    s->since.start_ticks = now_ticks;
    s->interval_max_ns = 0;
    return json_finish(&j);
}
