/* fuzz_rx.c: libFuzzer harness of nom's receive path: Ethernet frames the wire sends, written
 * by the simulated device of drivers/tests into the real driver's rx ring, harvested by the
 * driver, handed by netif_virtio to lwIP (the port's lwipopts.h) and up to nom's socket layer,
 * where a TCP listener (port 80, accepting and reading) and a UDP echo socket (port 7) wait.
 * One stack for the whole run, as on a guest that stays up; the fake libnom of net/tests runs it.
 *
 * Input: frames, each `flags:u8 len:u16le bytes[len]`. The flags let the fuzzer reach past the
 * checks a random frame fails first: bit 0 our MAC as destination, bit 1 our IP as destination,
 * bit 2 the IPv4 total length set to the frame's, bit 3 a correct TCP/UDP/ICMP checksum, bit 4
 * a correct IPv4 header checksum, bit 5 poll the stack before this frame (else all frames of an
 * input arrive in one batch, up to the ring's size), bit 6 switch the batching delay W between
 * 0 and 30 us (held frames reach the stack as one batch; each poll moves the device's clock
 * on 20 us). After the frames the stack runs once more,
 * the listener accepts and reads what it can, the echo socket answers, and the device takes
 * whatever was transmitted. ASan/UBSan reports and lwIP's assertions are the crashes. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/virtio_net.h>
#include <nom/net.h>
#include <nom/sched.h>

#include "fake_libnom.h"
#include "netloop.h"
#include "sim_device.h"
#include "virtio_net.h"

#define OUR_IP 0x0a00020fu /* 10.0.2.15 */
#define HDR ((uint32_t)sizeof(struct virtio_net_hdr_v1))
#define MAX_ACCEPTED 64

static struct sim sim;
static int listener = -1, echo = -1;
static int accepted[MAX_ACCEPTED];
static unsigned naccepted;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_rx: %s (errno %d)\n", what, errno);
    abort();
}

static int nonblocking(int fd)
{
    if (fd < 0 || nomfake_fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
        fail("socket");
    return fd;
}

static int bound(int type, uint16_t port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    int fd = nonblocking(socket(AF_INET, type, 0));
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail("bind");
    return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    struct vnet *dev = NULL;
    struct vnet_config vcfg = { .queue_size = 64 };
    struct nom_net_config cfg = { .ip = htonl(OUR_IP), .netmask = htonl(0xffffff00u),
                                  .gw = htonl(0x0a000202u) };
    sim_init(&sim, 256);
    if (vnet_open(&dev, &sim.plat, &vcfg) != 0 || nom_net_attach(dev, &cfg) != 0)
        fail("bringing up the stack");
    listener = bound(SOCK_STREAM, 80);
    if (listen(listener, 16) != 0)
        fail("listen");
    echo = bound(SOCK_DGRAM, 7);
    return 0;
}

/* ---- frame fix-ups (RFC 791, 793, 768, 792 checksums) ---- */

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t acc)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        acc += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1)
        acc += (uint32_t)p[n - 1] << 8;
    return acc;
}

static uint16_t fold(uint32_t acc)
{
    while (acc >> 16)
        acc = (acc & 0xffff) + (acc >> 16);
    return (uint16_t)~acc;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }

static void fix_l4(uint8_t *ip, size_t ihl, size_t len)
{
    uint8_t proto = ip[9];
    size_t off = proto == 6 ? 16 : proto == 17 ? 6 : proto == 1 ? 2 : 0;
    if (!off || len < ihl + off + 2 || (ip[6] & 0x3f) || ip[7]) /* unknown, short or fragment */
        return;
    uint8_t *l4 = ip + ihl;
    size_t l4len = len - ihl;
    put16(l4 + off, 0);
    uint32_t acc = 0;
    if (proto != 1) { /* TCP and UDP cover a pseudo-header */
        acc = sum16(ip + 12, 8, 0) + proto + (uint32_t)l4len;
        if (proto == 17)
            put16(l4 + 4, (uint16_t)l4len);
    }
    uint16_t c = fold(sum16(l4, l4len, acc));
    put16(l4 + off, proto == 17 && c == 0 ? 0xffff : c);
}

static void fix_frame(uint8_t *f, size_t len, uint8_t flags)
{
    if (flags & 1 && len >= 6)
        memcpy(f, sim.mac, 6);
    if (len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
        return;
    uint8_t *ip = f + 14;
    size_t iplen = len - 14, ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (ihl < 20 || ihl > iplen)
        return;
    if (flags & 2)
        put16(ip + 16, OUR_IP >> 16), put16(ip + 18, OUR_IP & 0xffff);
    if (flags & 4)
        put16(ip + 2, (uint16_t)iplen);
    if (flags & 8)
        fix_l4(ip, ihl, iplen);
    if (flags & 16) {
        put16(ip + 10, 0);
        put16(ip + 10, fold(sum16(ip, ihl, 0)));
    }
}

/* ---- the device and the applications ---- */

static void drain_tx(void)
{
    static uint8_t out[64][2048];
    static uint32_t lens[64];
    while (sim_tx_drain(&sim, out, lens, 64) == 64)
        ;
}

static void run_stack(void)
{
    sim_advance_us(&sim, 20);
    netloop_run();
    drain_tx();
}

static void deliver(const uint8_t *frame, size_t len)
{
    uint16_t id;
    uint32_t cap;
    if (!sim_take(&sim, SIM_RXQ, &id)) { /* ring full: let the stack take what is there */
        run_stack();
        if (!sim_take(&sim, SIM_RXQ, &id))
            fail("no rx buffer after a poll");
    }
    uint8_t *buf = sim_buf(&sim, SIM_RXQ, id, &cap);
    struct virtio_net_hdr_v1 hdr = { .num_buffers = 1 };
    memcpy(buf, &hdr, HDR);
    memcpy(buf + HDR, frame, len);
    sim_used(&sim, SIM_RXQ, id, HDR + (uint32_t)len);
}

static void serve(void)
{
    static char buf[2048];
    int fd;
    while (naccepted < MAX_ACCEPTED && (fd = accept(listener, NULL, NULL)) >= 0)
        accepted[naccepted++] = nonblocking(fd);
    for (unsigned i = 0; i < naccepted; i++) {
        ssize_t n = recv(accepted[i], buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            fake_close(accepted[i]);
            accepted[i--] = accepted[--naccepted];
        }
    }
    struct sockaddr_in from;
    socklen_t fromlen = sizeof from;
    ssize_t n = recvfrom(echo, buf, sizeof buf, 0, (struct sockaddr *)&from, &fromlen);
    if (n > 0)
        sendto(echo, buf, (size_t)n, 0, (struct sockaddr *)&from, fromlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t frame[VNET_MTU_FRAME];
    size_t off = 0;
    while (size - off >= 3) {
        uint8_t flags = data[off];
        size_t len = (size_t)(data[off + 1] | data[off + 2] << 8) % (VNET_MTU_FRAME + 1);
        off += 3;
        if (len > size - off)
            len = size - off;
        memcpy(frame, data + off, len);
        off += len;
        fix_frame(frame, len, flags);
        if (flags & 64)
            nom_net_set_batching_delay_us(nom_net_batching_delay_us() ? 0 : 30);
        if (flags & 32)
            run_stack();
        deliver(frame, len);
    }
    run_stack();
    nom_preempt_disable(); /* the stack lock netloop.h asks for */
    netloop_rx_flush();    /* what W still holds */
    nom_preempt_enable();
    serve();
    run_stack();
    return 0;
}
