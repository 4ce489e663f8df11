/* nomload: our closed-loop load client with per-request latency to the microsecond.
 *
 * Why: the stock tools give throughput but not every request's latency (memaslap only with -S,
 * which costs throughput; wrk only percentiles of its own; NPtcp only a minimum mean). nomload
 * keeps one outstanding request per connection ("many": N connections, "single": one), times
 * each from the first byte written to the last byte of its reply, and prints one JSON object:
 *   {"proto", "mode", "conns", "duration_s", "requests", "errors", "reconnects",
 *    "throughput_rps", "latency_us": {"mean", "p50", "p99", "stddev", "min", "max"}, ...}
 * throughput_rps is requests over the whole measured wall time; for netpipe, "busy_s" says
 * how much of it the timed echoes took.
 * Protocols: memcached (text GET/SET mix), http (GET with keep-alive), netpipe (NPtcp's
 * ping-pong protocol, single only: NPtcp's receiver serves one connection).
 * Usage: nomload --proto P --host IPV4 --port N [--conns N] [--duration S] [--warmup S]
 *        [--keys N --value-size N --get-permille N] [--path P] [--size N --repeats N --trials N]
 *        [--interval-ms N] [--samples FILE] [--seed N] [--no-preload]
 * memcached: every key is stored ("preload_sets" in the JSON) before the clock starts, so GETs
 * hit; --no-preload skips that when an earlier run stored them (a VM counter snapshot taken
 * around the run would count the preload's requests too).
 * --interval-ms prints "interval T_S REQUESTS MEAN_US STDDEV_US" lines before the JSON (a
 * time series: requests counted so far, latency of the interval's requests).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loadgen.h"

#define RBUF 65536
#define WBUF 65536

enum proto { P_MEMCACHED, P_HTTP, P_NETPIPE };

struct options {
    enum proto proto;
    const char *proto_name, *host, *path, *samples_path;
    int port;
    unsigned conns, interval_ms;
    double duration_s, warmup_s;
    struct mc_config mc;
    struct np_config np;
    uint64_t seed;
    int preload;  /* memcached: store every key before the clock starts (default 1) */
};

struct conn {
    int fd;
    char rbuf[RBUF + 1];
    size_t rlen;
    char wbuf[WBUF];
    size_t wlen, woff;
    uint64_t sent_ns;
    uint64_t rng;
    int is_get;     /* the pending request is a memcached GET */
    int out_armed;  /* EPOLLOUT is in the epoll set */
};

struct run {
    const struct options *o;
    struct samples lat;
    uint64_t start_ns, measure_ns, end_ns, next_interval_ns;
    size_t interval_first;  /* first latency sample of the current interval */
    uint64_t finish_ns;     /* when the last request ended (a NetPIPE session overruns) */
    unsigned long requests, errors, reconnects, hits, gets;
    int epfd;
    FILE *out;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "nomload: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(2);
}

/* A blocking TCP connection with TCP_NODELAY; retries refused connects for up to 10 s
 * (a restarting server, e.g. NPtcp's receiver between sessions). Returns fd or -1. */
static int connect_to(const struct options *o)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
    if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1)
        return -1;
    for (int attempt = 0; attempt < 1000; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            return fd;
        int err = errno;
        close(fd);
        if (err != ECONNREFUSED)
            return -1;
        usleep(10000);
    }
    return -1;
}

/* ---- the closed loop over many connections (memcached, http) --------------------------- */

static int build_request(struct run *r, struct conn *c)
{
    int n;
    if (r->o->proto == P_MEMCACHED)
        n = mc_write_request(&r->o->mc, &c->rng, c->wbuf, WBUF);
    else
        n = http_write_request(r->o->host, r->o->path, c->wbuf, WBUF);
    if (n < 0)
        return -1;
    c->is_get = r->o->proto == P_MEMCACHED && c->wbuf[0] == 'g';
    c->wlen = (size_t)n;
    c->woff = 0;
    return 0;
}

/* Writes what it can of the pending request; arms EPOLLOUT only while some is left, and
 * calls epoll_ctl only when that changes (a request fits the socket buffer: no extra
 * system call per request, so the client adds little to the latency it measures). */
static int flush_request(struct run *r, struct conn *c)
{
    while (c->woff < c->wlen) {
        ssize_t w = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN)
            break;
        if (w <= 0)
            return -1;
        c->woff += (size_t)w;
    }
    int want_out = c->woff < c->wlen;
    if (want_out == c->out_armed)
        return 0;
    c->out_armed = want_out;
    struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.ptr = c};
    return epoll_ctl(r->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static int send_next(struct run *r, struct conn *c)
{
    if (build_request(r, c) != 0)
        return -1;
    c->sent_ns = now_ns();
    return flush_request(r, c);
}

static int open_conn(struct run *r, struct conn *c)
{
    c->fd = connect_to(r->o);
    if (c->fd < 0)
        return -1;
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->rlen = 0;
    c->out_armed = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
        return -1;
    return send_next(r, c);
}

static int reopen_conn(struct run *r, struct conn *c)
{
    close(c->fd);  /* also removes it from the epoll set */
    r->reconnects++;
    return open_conn(r, c);
}

/* One complete reply of len bytes arrived at t: count and time it, drop it from rbuf. */
static void complete(struct run *r, struct conn *c, long len, uint64_t t, int hit)
{
    if (c->sent_ns >= r->measure_ns && t <= r->end_ns) {
        r->requests++;
        r->gets += (unsigned long)c->is_get;
        r->hits += (unsigned long)hit;
        samples_add(&r->lat, t - c->sent_ns);
    }
    memmove(c->rbuf, c->rbuf + len, c->rlen - (size_t)len);
    c->rlen -= (size_t)len;
    c->rbuf[c->rlen] = '\0';
}

/* Reads and handles replies; returns 1 if the connection must be reopened, 0 otherwise. */
static int on_readable(struct run *r, struct conn *c)
{
    ssize_t n = recv(c->fd, c->rbuf + c->rlen, RBUF - c->rlen, 0);
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n <= 0)
        return 1;
    uint64_t t = now_ns();
    c->rlen += (size_t)n;
    c->rbuf[c->rlen] = '\0';
    int hit = 0, status = 0, close_after = 0;
    long len = r->o->proto == P_MEMCACHED ? mc_response_length(c->rbuf, c->rlen, &hit)
                                          : http_response_length(c->rbuf, c->rlen, &status,
                                                                 &close_after);
    if (len == 0)
        return 0;
    if (len < 0 || (r->o->proto == P_HTTP && status != 200)) {
        r->errors++;
        return 1;
    }
    complete(r, c, len, t, hit);
    if (close_after)
        return 1;
    return send_next(r, c) != 0;
}

/* "interval T_S REQUESTS MEAN_US STDDEV_US": requests so far, latency of this interval's. */
static void print_interval(struct run *r, uint64_t t)
{
    if (!r->o->interval_ms || t < r->next_interval_ns)
        return;
    double sum = 0, sq = 0, n = (double)(r->lat.n - r->interval_first);
    for (size_t i = r->interval_first; i < r->lat.n; i++)
        sum += r->lat.ns[i];
    double mean = n > 0 ? sum / n : 0;
    for (size_t i = r->interval_first; i < r->lat.n; i++)
        sq += (r->lat.ns[i] - mean) * (r->lat.ns[i] - mean);
    fprintf(r->out, "interval %.3f %lu %.3f %.3f\n", (t - r->start_ns) / 1e9, r->requests,
            mean / 1000.0, n > 0 ? sqrt(sq / n) / 1000.0 : 0.0);
    fflush(r->out);
    r->interval_first = r->lat.n;
    r->next_interval_ns += (uint64_t)r->o->interval_ms * 1000000u;
}

static void preload_memcached(const struct options *o)
{
    int fd = connect_to(o);
    if (fd < 0)
        die("connect (preload)");
    char buf[WBUF], reply[64];
    for (unsigned k = 0; k < o->mc.keys; k++) {
        int n = mc_write_set(&o->mc, k, buf, sizeof buf);
        if (n < 0 || send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n)
            die("preload send");
        ssize_t got = 0;
        while (got < 8) {  /* "STORED\r\n" */
            ssize_t m = recv(fd, reply + got, sizeof reply - (size_t)got, 0);
            if (m <= 0)
                die("preload reply");
            got += m;
        }
    }
    close(fd);
}

static void run_closed_loop(struct run *r)
{
    const struct options *o = r->o;
    struct conn *conns = calloc(o->conns, sizeof *conns);
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!conns || r->epfd < 0)
        die("setup");
    for (unsigned i = 0; i < o->conns; i++) {
        conns[i].rng = o->seed * 0x9E3779B97F4A7C15ULL + i + 1;
        if (open_conn(r, &conns[i]) != 0)
            die("connect");
    }
    struct epoll_event evs[64];
    for (;;) {
        uint64_t t = now_ns();
        print_interval(r, t);
        if (t >= r->end_ns)
            break;
        int n = epoll_wait(r->epfd, evs, 64, 10);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            int reopen = (evs[i].events & (EPOLLERR | EPOLLHUP)) && !(evs[i].events & EPOLLIN);
            if (!reopen && (evs[i].events & EPOLLOUT))
                reopen = flush_request(r, c) != 0;
            if (!reopen && (evs[i].events & EPOLLIN))
                reopen = on_readable(r, c);
            if (reopen && reopen_conn(r, c) != 0)
                die("reconnect");
        }
    }
    for (unsigned i = 0; i < o->conns; i++)
        close(conns[i].fd);
    close(r->epfd);
    free(conns);
}

/* ---- NetPIPE ping-pong: sessions back to back until the duration is over --------------- */

/* Sizes the next session to last about NP_SESSION_NS (or the time left, if less) at the last
 * session's mean round trip: long enough that the receiver's restart between sessions (a
 * fork and exec in the guest) costs little, short enough that a slower guest overruns the
 * duration by little. --repeats is the first session's count only. */
#define NP_SESSION_NS 2000000000ULL
static unsigned next_repeats(const struct run *r, const struct np_config *np, size_t first,
                             uint64_t t)
{
    if (r->lat.n <= first || t >= r->end_ns)
        return np->repeats;
    double sum = 0;
    for (size_t i = first; i < r->lat.n; i++)
        sum += r->lat.ns[i];
    double rtt_ns = sum / (double)(r->lat.n - first);
    uint64_t left = r->end_ns - t < NP_SESSION_NS ? r->end_ns - t : NP_SESSION_NS;
    double fill = (double)left / (rtt_ns * np->trials);
    return fill < 10 ? 10 : fill > 1e7 ? 10000000u : (unsigned)fill;
}

/* Counts each echo as it completes, so intervals and the request count run during a long
 * NetPIPE session too. */
static void netpipe_echo_done(void *ctx)
{
    struct run *r = ctx;
    r->requests++;
    print_interval(r, now_ns());
}

static void run_netpipe(struct run *r)
{
    struct np_config np = r->o->np;
    np.after_echo = netpipe_echo_done;
    np.ctx = r;
    while (now_ns() < r->end_ns) {
        int fd = connect_to(r->o);
        if (fd < 0)
            die("connect");
        int record = now_ns() >= r->measure_ns;
        size_t first = r->lat.n;
        long n = np_session(fd, &np, &r->lat, record);
        close(fd);
        if (n < 0) {
            r->errors++;
            continue;
        }
        uint64_t t = now_ns();
        np.repeats = record ? next_repeats(r, &np, first, t) : np.repeats;
    }
    r->finish_ns = now_ns();
}

/* ---- options and output ---------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: nomload --proto memcached|http|netpipe --host IPV4 --port N "
                    "[--conns N] [--duration S] [--warmup S] [--keys N] [--value-size N] "
                    "[--get-permille N] [--path P] [--size N] [--repeats N] [--trials N] "
                    "[--interval-ms N] [--samples FILE] [--seed N] [--no-preload]\n");
    exit(2);
}

static void parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"proto", 1, 0, 'P'}, {"host", 1, 0, 'h'}, {"port", 1, 0, 'p'}, {"conns", 1, 0, 'c'},
        {"duration", 1, 0, 'd'}, {"warmup", 1, 0, 'w'}, {"keys", 1, 0, 'k'},
        {"value-size", 1, 0, 'v'}, {"get-permille", 1, 0, 'g'}, {"path", 1, 0, 'u'},
        {"size", 1, 0, 's'}, {"repeats", 1, 0, 'r'}, {"trials", 1, 0, 't'},
        {"interval-ms", 1, 0, 'i'}, {"samples", 1, 0, 'S'}, {"seed", 1, 0, 'z'},
        {"no-preload", 0, 0, 'n'}, {0, 0, 0, 0}};
    *o = (struct options){.host = "127.0.0.1", .path = "/", .conns = 1, .duration_s = 10,
                          .mc = {.keys = 1000, .value_size = 32, .get_permille = 900},
                          .np = {.size = 1024, .repeats = 100, .trials = 3}, .seed = 1,
                          .preload = 1};
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'P': o->proto_name = optarg; break;
        case 'h': o->host = optarg; break;
        case 'p': o->port = atoi(optarg); break;
        case 'c': o->conns = (unsigned)atoi(optarg); break;
        case 'd': o->duration_s = atof(optarg); break;
        case 'w': o->warmup_s = atof(optarg); break;
        case 'k': o->mc.keys = (unsigned)atoi(optarg); break;
        case 'v': o->mc.value_size = (unsigned)atoi(optarg); break;
        case 'g': o->mc.get_permille = (unsigned)atoi(optarg); break;
        case 'u': o->path = optarg; break;
        case 's': o->np.size = (unsigned)atoi(optarg); break;
        case 'r': o->np.repeats = (unsigned)atoi(optarg); break;
        case 't': o->np.trials = (unsigned)atoi(optarg); break;
        case 'i': o->interval_ms = (unsigned)atoi(optarg); break;
        case 'S': o->samples_path = optarg; break;
        case 'z': o->seed = strtoull(optarg, NULL, 10); break;
        case 'n': o->preload = 0; break;
        default: usage();
        }
    }
    if (!o->proto_name || o->port <= 0 || o->conns < 1 || o->mc.keys < 1)
        usage();
    if (strcmp(o->proto_name, "memcached") == 0)
        o->proto = P_MEMCACHED;
    else if (strcmp(o->proto_name, "http") == 0)
        o->proto = P_HTTP;
    else if (strcmp(o->proto_name, "netpipe") == 0 && o->conns == 1)
        o->proto = P_NETPIPE;
    else
        usage();
}

static void write_samples(const char *path, const struct samples *s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die(path);
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%u\n", s->ns[i]);
    fclose(f);
}

static void print_result(struct run *r)
{
    const struct options *o = r->o;
    uint64_t finish = r->finish_ns > r->end_ns ? r->finish_ns : r->end_ns;
    double measured_s = (finish - r->measure_ns) / 1e9;
    if (o->samples_path)
        write_samples(o->samples_path, &r->lat);  /* completion order, before sorting */
    struct summary s = samples_summarize(&r->lat);
    fprintf(r->out, "{\"tool\": \"nomload\", \"proto\": \"%s\", \"mode\": \"%s\", "
            "\"conns\": %u, \"duration_s\": %.6f, \"requests\": %lu, \"errors\": %lu, "
            "\"reconnects\": %lu, \"throughput_rps\": %.3f, ",
            o->proto_name, o->conns > 1 ? "many" : "single", o->conns, measured_s,
            r->requests, r->errors, r->reconnects, r->requests / measured_s);
    if (o->proto == P_MEMCACHED)
        fprintf(r->out, "\"gets\": %lu, \"get_hits\": %lu, \"preload_sets\": %u, ", r->gets,
                r->hits, o->preload ? o->mc.keys : 0);
    if (o->proto == P_NETPIPE) {
        /* Time inside the timed echoes: the wall time less NetPIPE's own protocol (its
         * latency estimate, syncs, QUIT) and the receiver's restart between sessions. */
        double busy_ns = 0;
        for (size_t i = 0; i < r->lat.n; i++)
            busy_ns += r->lat.ns[i];
        fprintf(r->out, "\"message_bytes\": %u, \"busy_s\": %.6f, ", o->np.size, busy_ns / 1e9);
    }
    fprintf(r->out, "\"latency_us\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f, "
            "\"stddev\": %.3f, \"min\": %.3f, \"max\": %.3f}}\n",
            s.mean_us, s.p50_us, s.p99_us, s.stddev_us, s.min_us, s.max_us);
}

int main(int argc, char **argv)
{
    struct options o;
    parse_options(argc, argv, &o);
    if (o.proto == P_MEMCACHED && o.preload)
        preload_memcached(&o);
    struct run r = {.o = &o, .out = stdout};
    r.start_ns = now_ns();
    r.measure_ns = r.start_ns + (uint64_t)(o.warmup_s * 1e9);
    r.end_ns = r.measure_ns + (uint64_t)(o.duration_s * 1e9);
    r.next_interval_ns = r.start_ns + (uint64_t)o.interval_ms * 1000000u;
    if (o.proto == P_NETPIPE)
        run_netpipe(&r);
    else
        run_closed_loop(&r);
    print_result(&r);
    samples_free(&r.lat);
    return 0;
}
