/* loadgen.h: the interfaces inside nomload, our load client with per-request latency.
 *
 * Contract. A protocol (memcached text GET/SET, HTTP/1.1 GET) is a pair of pure functions:
 * one writes the next request of a connection into a buffer, the other looks at the bytes
 * received so far and says whether one whole response is there. They do no I/O, keep no global
 * state and never block, so the closed-loop driver (nomload.c) can run many connections in
 * one epoll loop, and the parsers can be unit-tested on captured bytes (tests/test_parsers.c).
 * Latency samples are nanoseconds, one per completed request (stats.c). Parsers read
 * buf[0..len) and need buf[len] to be a NUL byte (the driver keeps one there).
 */
#ifndef LOADGEN_H
#define LOADGEN_H

#include <stddef.h>
#include <stdint.h>

/* ---- stats.c: per-request latency samples and their summary -------------------------- */
struct samples {
    uint32_t *ns;  /* a request slower than 4.29 s is clamped to UINT32_MAX */
    size_t n, cap;
};

struct summary {
    double mean_us, p50_us, p99_us, stddev_us, min_us, max_us;
};

/* Appends one latency; returns 0, or -1 when out of memory (the sample is dropped). */
int samples_add(struct samples *s, uint64_t ns);
/* Sorts the samples and summarizes them; all zero when there are none. */
struct summary samples_summarize(struct samples *s);
void samples_free(struct samples *s);

/* ---- proto_memcached.c: memcached text protocol, GET/SET mix (paper section 6) -------- */
struct mc_config {
    unsigned keys;        /* key space: "nomkey:%08u", 0 .. keys-1 */
    unsigned value_size;  /* bytes of each SET value */
    unsigned get_permille;/* 900: GET/SET 90/10 */
};

/* Writes a request chosen by *rng (GET or SET of a random key) into buf; returns its length,
 * or -1 if cap is too small. */
int mc_write_request(const struct mc_config *c, uint64_t *rng, char *buf, size_t cap);
/* Writes "set KEY ..." for key k (the preload); returns its length or -1 as above. */
int mc_write_set(const struct mc_config *c, unsigned k, char *buf, size_t cap);
/* Length of the first complete response in buf[0..len), 0 if incomplete, -1 if it is not a
 * GET/SET reply (ERROR, SERVER_ERROR, garbage). *hit is set to 1 for a VALUE reply. */
long mc_response_length(const char *buf, size_t len, int *hit);

/* ---- proto_http.c: HTTP/1.1 GET with keep-alive ---------------------------------------- */
/* Writes "GET path HTTP/1.1" with Host; returns its length or -1 if cap is too small. */
int http_write_request(const char *host, const char *path, char *buf, size_t cap);
/* Length of the first complete response (headers + Content-Length body), 0 if incomplete,
 * -1 if malformed or without Content-Length. *status gets the status code and *close 1 when
 * the server said "Connection: close". */
long http_response_length(const char *buf, size_t len, int *status, int *close);

/* ---- netpipe_pingpong.c: NetPIPE's TCP transmitter protocol, ping-pong mode ---------- */
struct np_config {
    unsigned size;     /* message bytes; the receiver runs NPtcp -l SIZE -u SIZE -p 0 */
    unsigned repeats;  /* echoes per trial that we announce (NetPIPE's nrepeat) */
    unsigned trials;   /* NetPIPE's TRIALS: 3 unless built with -DFINAL (then 7) */
    void (*after_echo)(void *ctx);  /* optional: called after each timed echo */
    void *ctx;
};

/* Runs one whole NetPIPE session on connected socket fd (NPtcp's receiver ends it only at
 * QUIT): its latency estimate (100 echoes, never recorded), then trials x repeats timed
 * echoes, recorded into *s when record is set, then QUIT. Returns the number of timed echoes,
 * or -1 on an I/O error or a receiver that does not follow the protocol. */
long np_session(int fd, const struct np_config *c, struct samples *s, int record);

/* ---- xorshift64*: the request mix, reproducible from a seed --------------------------- */
static inline uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

#endif
