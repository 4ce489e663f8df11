/*
 * pingpong.c: the network stack's instructions per round trip, counted on the host (issue 16).
 *
 * Two machines on a cable, as in net/tests: each process runs its own lwIP stack, the netif,
 * the driving loop and the socket layer of net/ on the fake driver (tests/fake/fake_vnet.h, one
 * Ethernet frame per SOCK_SEQPACKET message) and the fake libnom (tests/fake/fake_libnom.h).
 *
 *   pingpong server WIRE ROUNDS WARMUP REQ RESP   192.0.2.1:5001; answers each REQ bytes
 *   pingpong client WIRE ROUNDS WARMUP REQ RESP   192.0.2.2; sends REQ bytes, reads RESP back
 *
 * RESP 0 is a stream, as NetPIPE's streaming test (the experiment's NetPIPE "many"): the
 * client sends REQ-byte messages back to back and reads nothing, the server reads them.
 *
 * WIRE is an inherited descriptor (one end of a socketpair each). Both sides read and write
 * through the file layer (fake_read/fake_write, as NetPIPE's read/write reach the socket layer
 * through libnom's fd table), with both checksum offloads on, as on QEMU's tap. The client
 * checks every byte it gets back and exits 1 on a difference.
 *
 * What is counted: tools/bench/stack_count.py runs the server under valgrind's callgrind with
 * collection on only inside serve_rounds() (--toggle-collect), which the server enters after
 * WARMUP round trips: the ROUNDS round trips of a connection that is already up, everything the
 * stack, the fake driver and the fake libnom do for them (the idle path included: the fake
 * libnom polls and blocks as libnom would), nothing of the client, the set-up or the close.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <nom/net.h>

#include "fake_libnom.h"
#include "fake_vnet.h"

#define PORT 5001
#define MAX_MESSAGE (64u * 1024u)

static struct vnet *dev;

static void die(const char *what)
{
    fprintf(stderr, "pingpong: %s (errno %d)\n", what, errno);
    exit(2);
}

static uint32_t addr_of(int idx) { return htonl(0xc0000200u | (uint32_t)idx); } /* 192.0.2.idx */

static void machine_up(int wire, int idx)
{
    uint8_t mac[6] = {0x02, 0, 0, 0, 0, (uint8_t)idx};
    struct nom_net_config cfg = {.ip = addr_of(idx), .netmask = htonl(0xffffff00u)};
    dev = fake_vnet_open(wire, mac, 0);
    if (dev == NULL)
        die("fake_vnet_open");
    /* The server's frames leave with their checksums partial, as to a device that completes
     * them, so that the fake does no summing in the counted process; the client's fake then
     * vouches for every frame it receives. */
    fake_vnet_offload(dev, VNET_OFFLOAD_TX_CSUM | VNET_OFFLOAD_RX_CSUM, idx == 1);
    fake_sched_watch(wire);
    if (nom_net_attach(dev, &cfg) != 0)
        die("nom_net_attach");
}

static void read_exact(int fd, uint8_t *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = fake_read(fd, buf + got, n - got);
        if (r <= 0)
            die(r == 0 ? "the peer closed early" : "read");
        got += (size_t)r;
    }
}

static void write_all(int fd, const uint8_t *buf, size_t n)
{
    for (size_t put = 0; put < n;) {
        ssize_t r = fake_write(fd, buf + put, n - put);
        if (r <= 0)
            die("write");
        put += (size_t)r;
    }
}

static uint8_t pattern(size_t i) { return (uint8_t)(i * 7u + i / 251u); }

static void round_trip(int fd, uint8_t *in, size_t req, const uint8_t *out, size_t resp)
{
    read_exact(fd, in, req);
    if (resp > 0)
        write_all(fd, out, resp);
}

/* The counted part: callgrind's --toggle-collect names it, so it stays a function of its own,
 * entered once (the warm-up runs outside it). */
__attribute__((noinline)) void serve_rounds(int fd, unsigned rounds, uint8_t *in, size_t req,
                                            const uint8_t *out, size_t resp)
{
    for (unsigned i = 0; i < rounds; i++)
        round_trip(fd, in, req, out, resp);
}

static void server(unsigned rounds, unsigned warmup, size_t req, size_t resp, uint8_t *in,
                   uint8_t *out)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 1) != 0)
        die("listen");
    int fd = accept(ls, NULL, NULL);
    if (fd < 0)
        die("accept");
    for (unsigned i = 0; i < warmup; i++)
        round_trip(fd, in, req, out, resp);
    serve_rounds(fd, rounds, in, req, out, resp);
    if (fake_read(fd, in, 1) != 0) /* the client's close */
        die("no close after the last round");
    fake_close(fd);
    fake_close(ls);
    fake_run_ms(50); /* the last ACK and FIN go out */
}

static void client(unsigned rounds, size_t req, size_t resp, const uint8_t *out, uint8_t *in)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT),
                            .sin_addr.s_addr = addr_of(1)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die("socket");
    for (int tries = 0; connect(fd, (struct sockaddr *)&a, sizeof a) != 0; tries++) {
        if (errno != ECONNREFUSED || tries == 100) /* the server may not listen yet */
            die("connect");
        fake_close(fd);
        fake_run_ms(20);
        if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
            die("socket");
    }
    for (unsigned i = 0; i < rounds; i++) {
        write_all(fd, out, req);
        if (resp == 0)
            continue;
        read_exact(fd, in, resp);
        for (size_t k = 0; k < resp; k++)
            if (in[k] != pattern(k)) {
                fprintf(stderr, "pingpong: round %u: byte %zu differs\n", i, k);
                exit(1);
            }
    }
    fake_close(fd);
    while (!fake_vnet_peer_gone(dev)) /* keep answering until the server has closed */
        fake_run_ms(5);
}

static unsigned long number(const char *s, unsigned long max)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || end == s || v > max) {
        fprintf(stderr, "pingpong: %s: not a number up to %lu\n", s, max);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    static uint8_t in[MAX_MESSAGE], out[MAX_MESSAGE];
    if (argc != 7 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
        fprintf(stderr, "usage: pingpong server|client WIRE ROUNDS WARMUP REQ RESP\n");
        return 2;
    }
    int wire = (int)number(argv[2], 1u << 20);
    unsigned rounds = (unsigned)number(argv[3], 10000000);
    unsigned warmup = (unsigned)number(argv[4], 10000000);
    size_t req = number(argv[5], MAX_MESSAGE), resp = number(argv[6], MAX_MESSAGE);
    if (req == 0) {
        fprintf(stderr, "pingpong: REQ must be at least 1 byte\n");
        return 2;
    }
    for (size_t k = 0; k < MAX_MESSAGE; k++)
        out[k] = pattern(k);
    int is_server = argv[1][0] == 's';
    machine_up(wire, is_server ? 1 : 2);
    if (is_server)
        server(rounds, warmup, req, resp, in, out);
    else
        client(warmup + rounds, req, resp, out, in);
    return 0;
}
