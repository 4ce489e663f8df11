/*
 * rawecho: the floor of every latency figure. A nom application that drives the first free
 * virtio-net NIC with the bare driver (no lwIP) and answers, straight from the rx callback:
 * ARP for its address, ICMP echo, UDP echo on port 7, and a control port (UDP 7001) whose
 * requests "stats", "w=US" and "exit" return the driver's counters as one JSON line, set the
 * batching delay, or release the NIC and end the application.
 *
 *   rawecho [--ip=A.B.C.D] [--batching-delay=US] [--idle-threshold=US] [--nic=BB_INDEX]
 *
 * The default address 10.0.2.15 is the one QEMU user networking forwards to (hostfwd=udp:...).
 * The loop polls while frames come, arms the receive interrupt after --idle-threshold µs
 * without one (default 50, like libnom's idle poll), and then blocks until the interrupt or
 * the driver's batching deadline: no busy waiting when idle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/syscall.h>
#include <nom/time.h>

#include "proto.h"
#include "vnet_nom.h"

#define ECHO_PORT 7
#define CONTROL_PORT 7001

struct rawecho {
    struct vnet *dev;
    struct proto_addr me;
    int bb_index;
    int exit_requested;
    uint64_t echoed, answered, dropped;
};

static void say(const char *line)
{
    nom_sys_console_write(line, strlen(line));
}

static void send_frame(struct rawecho *r, const uint8_t *frame, size_t len)
{
    struct vnet_iov iov = { frame, len };
    if (vnet_tx_enqueue(r->dev, &iov, 1) != 0)
        r->dropped++;
}

static size_t stats_json(struct rawecho *r, char *buf, size_t size)
{
    struct vnet_stats s;
    vnet_stats(r->dev, &s);
    return (size_t)snprintf(buf, size,
        "{\"app\":\"rawecho\",\"batching_delay_us\":%u,\"echoed\":%llu,\"answered\":%llu,"
        "\"dropped\":%llu,\"rx_packets\":%llu,\"rx_batches\":%llu,\"tx_packets\":%llu,"
        "\"tx_batches\":%llu,\"tx_kicks\":%llu,\"rx_kicks\":%llu,\"kicks_suppressed\":%llu,"
        "\"interrupts\":%llu,\"polls\":%llu,\"empty_polls\":%llu,\"arms\":%llu,"
        "\"arm_races\":%llu,\"tx_ring_full\":%llu,\"rx_hold_full\":%llu,\"rx_bad\":%llu,"
        "\"tx_bad\":%llu}\n",
        vnet_batching_delay_us(r->dev), (unsigned long long)r->echoed,
        (unsigned long long)r->answered, (unsigned long long)r->dropped,
        (unsigned long long)s.rx_packets, (unsigned long long)s.rx_batches,
        (unsigned long long)s.tx_packets, (unsigned long long)s.tx_batches,
        (unsigned long long)s.tx_kicks, (unsigned long long)s.rx_kicks,
        (unsigned long long)s.kicks_suppressed, (unsigned long long)s.interrupts,
        (unsigned long long)s.polls, (unsigned long long)s.empty_polls,
        (unsigned long long)s.arms, (unsigned long long)s.arm_races,
        (unsigned long long)s.tx_ring_full, (unsigned long long)s.rx_hold_full,
        (unsigned long long)s.rx_bad, (unsigned long long)s.tx_bad);
}

/* "stats", "w=US" or "exit"; anything else gets the counters too. */
static void control(struct rawecho *r, const uint8_t *in, const struct proto_udp *u,
                    uint8_t *out)
{
    char cmd[32] = { 0 }, reply[1024];
    memcpy(cmd, u->payload, u->payload_len < sizeof cmd - 1 ? u->payload_len : sizeof cmd - 1);
    cmd[strcspn(cmd, "\r\n")] = 0;
    if (strncmp(cmd, "w=", 2) == 0)
        vnet_set_batching_delay_us(r->dev, (uint32_t)strtoul(cmd + 2, NULL, 10));
    if (strcmp(cmd, "exit") == 0)
        r->exit_requested = 1;
    size_t n = stats_json(r, reply, sizeof reply);
    send_frame(r, out, proto_udp_reply(in, reply, n, out));
}

static void answer(struct rawecho *r, const uint8_t *in, size_t len)
{
    static uint8_t out[PROTO_FRAME_MAX];
    struct proto_udp u;
    size_t n;
    if (proto_udp_view(&r->me, in, len, &u)) {
        if (u.dst_port == ECHO_PORT && (n = proto_udp_echo(in, len, out))) {
            r->echoed++;
            send_frame(r, out, n);
        } else if (u.dst_port == CONTROL_PORT) {
            control(r, in, &u, out);
        }
    } else if ((n = proto_arp_reply(&r->me, in, len, out))
               || (n = proto_icmp_reply(&r->me, in, len, out))) {
        r->answered++;
        send_frame(r, out, n);
    }
}

/* The driver's rx callback: answers each frame; the answers form the stack's tx batch. */
static void on_frames(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    struct rawecho *r = arg;
    for (unsigned i = 0; i < count; i++)
        answer(r, frames[i].data, frames[i].len);
    vnet_tx_commit(r->dev);
}

/* Sends what is held and waits (at most 100 ms) until the device completed it, so the last
 * answers are not lost to the reset that releases the NIC. */
static int drain(struct rawecho *r)
{
    uint64_t give_up = nom_tsc() + nom_us_to_tsc(100000);
    vnet_tx_flush(r->dev);
    int left;
    while ((left = vnet_tx_outstanding(r->dev)) > 0 && nom_tsc() < give_up)
        nom_sys_block(nom_tsc() + nom_us_to_tsc(100));
    return left < 0 ? left : 0;
}

/* Polls while there is work; when the driver says idle, arms the interrupt and blocks until
 * it fires or the batching deadline passes (1 ms steps without an interrupt). */
static int serve(struct rawecho *r)
{
    while (!r->exit_requested) {
        int n = vnet_poll(r->dev, on_frames, r);
        if (n < 0)
            return n;
        if (n > 0 || !vnet_idle(r->dev))
            continue;
        int armed = vnet_arm(r->dev);
        if (armed < 0)
            return armed;
        if (armed == VNET_ARM_BUSY)
            continue;
        uint64_t deadline = vnet_next_deadline(r->dev);
        if (armed == VNET_ARM_NO_IRQ && !deadline)
            deadline = nom_tsc() + nom_us_to_tsc(1000);
        nom_sys_block(deadline);
    }
    return drain(r);
}

static int parse_ip(const char *s, uint8_t ip[4])
{
    unsigned a, b, c, d;
    char end;
    if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 || (a | b | c | d) > 255)
        return -1;
    ip[0] = (uint8_t)a, ip[1] = (uint8_t)b, ip[2] = (uint8_t)c, ip[3] = (uint8_t)d;
    return 0;
}

static int parse_args(int argc, char **argv, struct rawecho *r, struct vnet_config *cfg)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--ip=", 5) == 0 && parse_ip(a + 5, r->me.ip) == 0)
            continue;
        if (strncmp(a, "--batching-delay=", 17) == 0)
            cfg->batching_delay_us = (uint32_t)strtoul(a + 17, NULL, 10);
        else if (strncmp(a, "--idle-threshold=", 17) == 0)
            cfg->idle_threshold_us = (uint32_t)strtoul(a + 17, NULL, 10);
        else if (strncmp(a, "--nic=", 6) == 0)
            r->bb_index = atoi(a + 6);
        else
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct rawecho r = { .me.ip = { 10, 0, 2, 15 }, .bb_index = -1 };
    struct vnet_config cfg = { .idle_threshold_us = 50 };
    char line[1024];
    if (parse_args(argc, argv, &r, &cfg)) {
        say("rawecho: usage: rawecho [--ip=A.B.C.D] [--batching-delay=US] "
            "[--idle-threshold=US] [--nic=BB_INDEX]\n");
        return 2;
    }
    int err = vnet_nom_open(&r.dev, r.bb_index, &cfg);
    if (err) {
        snprintf(line, sizeof line, "rawecho: no virtio-net NIC (error %d)\n", err);
        say(line);
        return 1;
    }
    vnet_mac(r.dev, r.me.mac);
    snprintf(line, sizeof line,
             "rawecho: nic %d mac %02x:%02x:%02x:%02x:%02x:%02x ip %u.%u.%u.%u W %u us "
             "features 0x%llx link %d; udp echo on %d, control on %d\n",
             vnet_nom_bb_index(r.dev), r.me.mac[0], r.me.mac[1], r.me.mac[2], r.me.mac[3],
             r.me.mac[4], r.me.mac[5], r.me.ip[0], r.me.ip[1], r.me.ip[2], r.me.ip[3],
             vnet_batching_delay_us(r.dev), (unsigned long long)vnet_features(r.dev),
             vnet_link_up(r.dev), ECHO_PORT, CONTROL_PORT);
    say(line);
    err = serve(&r);
    stats_json(&r, line, sizeof line);
    say(line);
    vnet_nom_close(r.dev);
    say(err ? "rawecho: device broken, NIC released\n" : "rawecho: NIC released, exiting\n");
    return err ? 1 : 0;
}
