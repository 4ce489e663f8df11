/* netpipe_pingpong.c: NetPIPE 3.7's TCP transmitter protocol (src/netpipe.c, src/tcp.c of the
 * Debian source package netpipe), ping-pong with one fixed message size, timing every echo.
 *
 * Why not NPtcp itself: it reports the minimum over trials of the mean per size, not each
 * request. Speaking its protocol lets the same unmodified NPtcp receiver serve both tools.
 * The sequence, for `NPtcp -l S -u S -p 0` on both sides (one size, no perturbation):
 *   Sync; 100 echoes (latency estimate); Sync; then for the one size: Sync; repeat count
 *   (uint32, network order); trials x { Sync; repeats echoes }; then QUIT (5 bytes each way).
 * Sync is "SyncMe" sent and the same 6 bytes read back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loadgen.h"

#define NP_LATENCY_ECHOES 100

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int np_sync(int fd)
{
    char reply[6];
    if (write_all(fd, "SyncMe", 6) != 0 || read_all(fd, reply, 6) != 0)
        return -1;
    return memcmp(reply, "SyncMe", 6) == 0 ? 0 : -1;
}

/* One message out and the same number of bytes back; stores its round-trip time. */
static int np_echo(int fd, char *msg, unsigned size, uint64_t *rtt_ns)
{
    uint64_t t0 = now_ns();
    if (write_all(fd, msg, size) != 0 || read_all(fd, msg, size) != 0)
        return -1;
    *rtt_ns = now_ns() - t0;
    return 0;
}

static int np_echoes(int fd, char *msg, const struct np_config *c, unsigned n,
                     struct samples *s)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t rtt;
        if (np_echo(fd, msg, c->size, &rtt) != 0)
            return -1;
        if (s)
            samples_add(s, rtt);
        if (s && c->after_echo)
            c->after_echo(c->ctx);
    }
    return 0;
}

static long np_run(int fd, const struct np_config *c, char *msg, struct samples *s, int record)
{
    uint32_t repeats = htonl(c->repeats);
    char quit[5] = "QUIT";
    if (np_sync(fd) != 0 || np_echoes(fd, msg, c, NP_LATENCY_ECHOES, NULL) != 0
        || np_sync(fd) != 0 || np_sync(fd) != 0 || write_all(fd, &repeats, 4) != 0)
        return -1;
    for (unsigned t = 0; t < c->trials; t++)
        if (np_sync(fd) != 0 || np_echoes(fd, msg, c, c->repeats, record ? s : NULL) != 0)
            return -1;
    if (write_all(fd, quit, 5) != 0 || read_all(fd, quit, 5) != 0)
        return -1;
    return (long)c->trials * c->repeats;
}

long np_session(int fd, const struct np_config *c, struct samples *s, int record)
{
    char *msg = calloc(1, c->size ? c->size : 1);
    if (!msg)
        return -1;
    long n = np_run(fd, c, msg, s, record);
    free(msg);
    return n;
}
