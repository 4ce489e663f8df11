/*
 * rawecho: the floor of every latency figure. A nom application that drives the first free
 * virtio-net NIC with the bare driver (no lwIP) and answers, straight from the rx callback:
 * ARP for its address, ICMP echo, UDP echo on port 7, and a control port (UDP 7001) whose
 * requests "stats", "w=US" and "exit" return the driver's counters as one JSON line, set the
 * batching delay, or release the NIC and end the application.
 *
 *   rawecho [--ip=A.B.C.D] [--batching-delay=US] [--idle-poll=US] [--nic=BB_INDEX]
 *
 * The default address 10.0.2.15 is the one QEMU user networking forwards to (hostfwd=udp:...).
 * The NIC is driven from libnom's scheduler, as net/ drives it: an idle hook polls while frames
 * come, arms the receive interrupt after --idle-poll µs without any (libnom's knob, default
 * 50), and libnom then blocks the core until the interrupt or the driver's batching deadline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#include "proto.h"
#include "vnet_nom.h"

#define ECHO_PORT 7
#define CONTROL_PORT 7001

static struct {
    struct vnet *dev;
    struct proto_addr me;
    int bb_index;
    int exit_requested;
    int err;                 /* the driver error that ended the service, else 0 */
    uint64_t echoed, answered, dropped;
    struct nom_waitq done;   /* main waits here until exit_requested */
    struct nom_timer timer;  /* at the driver's batching deadline */
    uint64_t timer_at;       /* what timer is armed for, or 0 */
} app = { .me.ip = { 10, 0, 2, 15 }, .bb_index = -1 };

static void say(const char *line)
{
    nom_sys_console_write(line, strlen(line));
}

static void stop(int err)
{
    app.err = err;
    app.exit_requested = 1;
    nom_waitq_wake_all(&app.done);
}

/* ---- answering --------------------------------------------------------------------------- */

static void send_frame(const uint8_t *frame, size_t len)
{
    struct vnet_iov iov = { frame, len };
    if (vnet_tx_enqueue(app.dev, &iov, 1) != 0)
        app.dropped++;
}

static size_t stats_json(char *buf, size_t size)
{
    struct vnet_stats s;
    vnet_stats(app.dev, &s);
    return (size_t)snprintf(buf, size,
        "{\"app\":\"rawecho\",\"batching_delay_us\":%u,\"echoed\":%llu,\"answered\":%llu,"
        "\"dropped\":%llu,\"rx_packets\":%llu,\"rx_batches\":%llu,\"tx_packets\":%llu,"
        "\"tx_batches\":%llu,\"tx_kicks\":%llu,\"rx_kicks\":%llu,\"kicks_suppressed\":%llu,"
        "\"interrupts\":%llu,\"polls\":%llu,\"empty_polls\":%llu,\"arms\":%llu,"
        "\"arm_races\":%llu,\"tx_ring_full\":%llu,\"rx_hold_full\":%llu,"
        "\"rx_drained\":%llu,\"rx_bad\":%llu,\"tx_bad\":%llu}\n",
        vnet_batching_delay_us(app.dev), (unsigned long long)app.echoed,
        (unsigned long long)app.answered, (unsigned long long)app.dropped,
        (unsigned long long)s.rx_packets, (unsigned long long)s.rx_batches,
        (unsigned long long)s.tx_packets, (unsigned long long)s.tx_batches,
        (unsigned long long)s.tx_kicks, (unsigned long long)s.rx_kicks,
        (unsigned long long)s.kicks_suppressed, (unsigned long long)s.interrupts,
        (unsigned long long)s.polls, (unsigned long long)s.empty_polls,
        (unsigned long long)s.arms, (unsigned long long)s.arm_races,
        (unsigned long long)s.tx_ring_full, (unsigned long long)s.rx_hold_full,
        (unsigned long long)s.rx_drained, (unsigned long long)s.rx_bad,
        (unsigned long long)s.tx_bad);
}

/* "stats", "w=US" or "exit"; every request gets the counters. */
static void control(const uint8_t *in, const struct proto_udp *u, uint8_t *out)
{
    char cmd[32] = { 0 }, reply[1024];
    memcpy(cmd, u->payload, u->payload_len < sizeof cmd - 1 ? u->payload_len : sizeof cmd - 1);
    cmd[strcspn(cmd, "\r\n")] = 0;
    if (strncmp(cmd, "w=", 2) == 0)
        vnet_set_batching_delay_us(app.dev, (uint32_t)strtoul(cmd + 2, NULL, 10));
    if (strcmp(cmd, "exit") == 0)
        stop(0);
    size_t n = stats_json(reply, sizeof reply);
    send_frame(out, proto_udp_reply(in, reply, n, out));
}

static void answer(const uint8_t *in, size_t len)
{
    static uint8_t out[PROTO_FRAME_MAX];
    struct proto_udp u;
    size_t n;
    if (proto_udp_view(&app.me, in, len, &u)) {
        if (u.dst_port == ECHO_PORT && (n = proto_udp_echo(in, len, out))) {
            app.echoed++;
            send_frame(out, n);
        } else if (u.dst_port == CONTROL_PORT) {
            control(in, &u, out);
        }
    } else if ((n = proto_arp_reply(&app.me, in, len, out))
               || (n = proto_icmp_reply(&app.me, in, len, out))) {
        app.answered++;
        send_frame(out, n);
    }
}

/* The driver's rx callback: answers each frame; the answers form the stack's tx batch. */
static void on_frames(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    (void)arg;
    for (unsigned i = 0; i < count; i++)
        answer(frames[i].data, frames[i].len);
    vnet_tx_commit(app.dev);
}

/* ---- driving the NIC from libnom's scheduler (vnet_nom.h) -------------------------------- */

static int pump(void);

static void timer_fired(void *arg)
{
    (void)arg;
    app.timer_at = 0;
    pump();
}

/* Keeps one timer at the earliest of the driver's batching deadline and `extra`, so the core
 * may block without holding a batch past W. */
static void keep_deadline(uint64_t extra)
{
    uint64_t at = vnet_next_deadline(app.dev);
    if (extra && (!at || extra < at))
        at = extra;
    if (at && at != app.timer_at) {
        app.timer_at = at;
        nom_timer_add(&app.timer, at, timer_fired, NULL);
    }
}

/* Idle hook poll (scheduler context): > 0 if frames were answered. */
static int pump(void)
{
    if (app.exit_requested)
        return 0;
    int n = vnet_poll(app.dev, on_frames, NULL);
    if (n < 0) {
        stop(n);
        return 0;
    }
    keep_deadline(0);
    return n;
}

static int hook_poll(void *arg)
{
    (void)arg;
    return pump();
}

/* Idle hook arm: interrupt mode; without an interrupt the timer polls every millisecond. */
static int hook_arm(void *arg)
{
    (void)arg;
    if (app.exit_requested)
        return 0;
    int a = vnet_arm(app.dev);
    if (a < 0)
        stop(a);
    else if (a == VNET_ARM_NO_IRQ)
        keep_deadline(nom_tsc() + nom_us_to_tsc(1000));
    return a == VNET_ARM_BUSY;
}

static struct nom_idle_hook hook = { .poll = hook_poll, .arm = hook_arm };

/* Sends what is held and waits (at most 100 ms) until the device completed it, so the last
 * answers are not lost to the reset that releases the NIC. Preemption disabled on entry. */
static void drain(void)
{
    uint64_t give_up = nom_tsc() + nom_us_to_tsc(100000);
    if (app.err || vnet_tx_flush(app.dev) < 0)
        return;
    while (vnet_tx_outstanding(app.dev) > 0 && nom_tsc() < give_up) {
        nom_preempt_enable();
        nom_sleep_until(nom_tsc() + nom_us_to_tsc(100));
        nom_preempt_disable();
    }
}

/* Serves until "exit" or a broken device. The hooks stay registered (libnom keeps them
 * forever) but do nothing once exit_requested is set. */
static void serve(void)
{
    nom_preempt_disable();
    nom_idle_hook_add(&hook);
    keep_deadline(0);
    while (!app.exit_requested)
        nom_waitq_wait(&app.done, 0);
    drain();
    nom_timer_cancel(&app.timer);
    nom_preempt_enable();
}

/* ---- start-up ---------------------------------------------------------------------------- */

static int parse_ip(const char *s, uint8_t ip[4])
{
    unsigned a, b, c, d;
    char end;
    if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 || (a | b | c | d) > 255)
        return -1;
    ip[0] = (uint8_t)a, ip[1] = (uint8_t)b, ip[2] = (uint8_t)c, ip[3] = (uint8_t)d;
    return 0;
}

/* A decimal number of at most max, the whole of s; -1 otherwise (a typo must not become 0). */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return *end == '\0' && errno == 0 && *out <= max ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct vnet_config *cfg)
{
    unsigned long long v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--ip=", 5) == 0 && parse_ip(a + 5, app.me.ip) == 0)
            continue;
        if (strncmp(a, "--batching-delay=", 17) == 0 &&
            parse_num(a + 17, VNET_MAX_BATCHING_DELAY_US, &v) == 0)
            cfg->batching_delay_us = (uint32_t)v;
        else if (strncmp(a, "--idle-poll=", 12) == 0 && parse_num(a + 12, 10000000, &v) == 0)
            nom_sched_set_idle_poll_us(v);
        else if (strncmp(a, "--nic=", 6) == 0 && parse_num(a + 6, 255, &v) == 0)
            app.bb_index = (int)v;
        else
            return -1;
    }
    return 0;
}

static void banner(void)
{
    char line[256];
    const uint8_t *m = app.me.mac, *ip = app.me.ip;
    snprintf(line, sizeof line,
             "rawecho: nic %d mac %02x:%02x:%02x:%02x:%02x:%02x ip %u.%u.%u.%u W %u us "
             "features 0x%llx link %d; udp echo on %d, control on %d\n",
             vnet_nom_bb_index(app.dev), m[0], m[1], m[2], m[3], m[4], m[5], ip[0], ip[1],
             ip[2], ip[3], vnet_batching_delay_us(app.dev),
             (unsigned long long)vnet_features(app.dev), vnet_link_up(app.dev), ECHO_PORT,
             CONTROL_PORT);
    say(line);
}

int main(int argc, char **argv)
{
    struct vnet_config cfg = { 0 };
    char line[1024];
    if (parse_args(argc, argv, &cfg)) {
        say("rawecho: usage: rawecho [--ip=A.B.C.D] [--batching-delay=US (0..max W)] "
            "[--idle-poll=US (0..10000000)] [--nic=BB_INDEX]\n");
        return 2;
    }
    int err = vnet_nom_open(&app.dev, app.bb_index, &cfg);
    if (err) {
        snprintf(line, sizeof line, "rawecho: no virtio-net NIC (error %d)\n", err);
        say(line);
        return 1;
    }
    vnet_mac(app.dev, app.me.mac);
    banner();
    serve();
    stats_json(line, sizeof line);
    say(line);
    vnet_nom_close(app.dev);
    say(app.err ? "rawecho: device broken, NIC released\n" : "rawecho: NIC released, exiting\n");
    return app.err ? 1 : 0;
}
