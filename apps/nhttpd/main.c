/* main.c: nhttpd, nom's web server: options, then the event loop (server.h).
 * The same source builds for Linux and for nom; what differs is in platform_*.c,
 * docstore_*.c and poller_*.c (see the Makefile). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docstore.h"
#include "platform.h"
#include "server.h"

/* nginx's client_header_timeout and send_timeout. Shorter (nhttpd had 15 s) closed connections
 * whose first request had not arrived yet in a burst through QEMU user networking: libslirp
 * listens with a backlog of 1, so the host's TCP holds a burst's clients and delivers their
 * requests only at their next retransmission, tens of seconds later (tools/netlab/README.md,
 * issue 10). */
#define IDLE_TIMEOUT_DEFAULT_MS 60000

static const char usage[] =
    "usage: nhttpd [--port=N] [--bind=ADDR] [--root=DIR] [--batching-delay=US]\n"
    "              [--idle-timeout=SECONDS] [--max-conns=N] [--buffer-mb=N]\n"
    "  --port=N              TCP port (default 80; 0: any, printed at start)\n"
    "  --bind=ADDR           IPv4 address to listen on (default 0.0.0.0)\n"
    "  --root=DIR            directory of documents (Linux; nom serves built-in ones)\n"
    "  --batching-delay=US   fix the batching delay (nom, paper 3.6) instead of adapting\n"
    "  --idle-timeout=S      seconds a connection may idle or take to send a request (60)\n"
    "  --max-conns=N         open connections before accepting pauses (10000)\n"
    "  --buffer-mb=N         memory for all connection buffers together (32)\n"
    "On nom, the network layer's options (nom_net_start) are accepted too.\n";

struct options {
    struct server_config server;
    const char *root;
    long batching_delay_us; /* -1: adaptive */
};

/* The value of "--name=value" if arg is that option, else NULL. */
static const char *value_of(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

static bool parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_option(const char *arg, struct options *o)
{
    const char *v;
    unsigned long x;
    if ((v = value_of(arg, "--port")) && parse_ulong(v, 65535, &x))
        o->server.port = (unsigned)x;
    else if ((v = value_of(arg, "--bind")) && *v)
        o->server.bind_addr = v;
    else if ((v = value_of(arg, "--root")) && *v)
        o->root = v;
    else if ((v = value_of(arg, "--batching-delay")) && parse_ulong(v, 1000000, &x))
        o->batching_delay_us = (long)x;
    else if ((v = value_of(arg, "--max-conns")) && parse_ulong(v, 1000000, &x) && x > 0)
        o->server.max_conns = (unsigned)x;
    else if ((v = value_of(arg, "--buffer-mb")) && parse_ulong(v, 65536, &x) && x > 0)
        o->server.buffer_bytes = (size_t)x << 20;
    else if ((v = value_of(arg, "--idle-timeout"))) {
        char *end;
        double s = strtod(v, &end);
        if (*end != '\0' || !(s > 0 && s <= 86400))
            return false;
        o->server.idle_timeout_ms = (unsigned)(s * 1000);
    } else
        return false;
    return true;
}

static int open_store(const char *root)
{
    int r = docstore_init(root);
    if (r == -EINVAL && root == NULL)
        fprintf(stderr, "nhttpd: --root=DIR is required: this build serves a directory\n");
    else if (r == -EINVAL)
        fprintf(stderr, "nhttpd: --root is not supported: this build serves documents built "
                        "into the image\n");
    else if (r != 0)
        fprintf(stderr, "nhttpd: --root=%s: %s\n", root, strerror(-r));
    return r;
}

int main(int argc, char **argv)
{
    struct options o = {
        .server = {.bind_addr = "0.0.0.0", .port = 80, .idle_timeout_ms = IDLE_TIMEOUT_DEFAULT_MS,
                   .max_conns = 10000, .buffer_bytes = (size_t)32 << 20},
        .root = NULL,
        .batching_delay_us = -1,
    };
    static struct server s; /* big (latency histograms): not on the stack */
    if (platform_start(&argc, argv) != 0)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        if (!parse_option(argv[i], &o)) {
            fprintf(stderr, "nhttpd: bad option %s\n%s", argv[i], usage);
            return 2;
        }
    }
    if (open_store(o.root) != 0)
        return 1;
    /* On nom, platform_start()'s network stack took --batching-delay (nom/net.h) and the
     * controller keeps W fixed at it; one that is still here met a platform without one. */
    if (o.batching_delay_us >= 0)
        fprintf(stderr, "nhttpd: --batching-delay ignored: this platform has none\n");
    if (server_open(&s, &o.server) != 0)
        return 1;
    int r = server_run(&s);
    fprintf(stderr, "nhttpd: event loop failed: %s\n", strerror(-r));
    return 1;
}
