/*
 * nom/net.h: bringing up an application's private network stack (paper 3.6; DESIGN.md "The data
 * path and the batching delay"). After nom_net_start() the application uses the POSIX socket
 * API of libnom's <sys/socket.h>, <poll.h>, <netdb.h> (implemented in net/ over lwIP).
 *
 * Contract. An application calls nom_net_start() once, from a thread, before any socket call
 * that needs the network (sockets may be created earlier; they just reach no one yet). It
 * acquires one virtio-net NIC, starts lwIP on it and waits for an address: DHCP unless the
 * command line gives a static one. From then on the stack is driven by libnom's scheduler (an
 * idle hook polls the NIC when no thread runs; a timer runs lwIP's timeouts and the batching
 * deadlines); the application never calls the stack directly. One NIC per application.
 * The batching delay W may be changed at any time from any thread. Counters are monotonic.
 *
 * Command-line options (removed from argv by nom_net_start, so getopt-based programs such as
 * memcached never see them):
 *   --ip=A.B.C.D/N   static address and prefix length (default: DHCP)
 *   --gw=A.B.C.D     default gateway with --ip (default: none)
 *   --nic=N          bulletin-board index of the NIC to acquire (default: the first free one)
 *   --batching-delay=US  W in microseconds from the start (default 0). The one spelling of W
 *                    on every command line: an application that runs libnom's controller
 *                    (nom/adapt.h) keeps this W fixed instead of adapting it
 *   --idle-poll-us=US  how long an idle core keeps polling the NIC before it re-enables the
 *                      interrupt and blocks (the poll/interrupt switch; default: libnom's
 *                      budget of 50 us, nom/sched.h). Longer: fewer interrupts and wake-ups
 *                      under bursty load, more CPU spent spinning; 0: interrupt mode as soon as
 *                      the core is idle.
 *   --no-csum-offload  the NIC's checksum offload stays off (else vnet_config.csum_offload):
 *                      lwIP computes and checks every TCP/UDP checksum itself
 */
#ifndef NOM_NET_H
#define NOM_NET_H

#include <stdint.h>

/* Addressing, for nom_net_attach(); addresses in network byte order. */
struct nom_net_config {
    uint32_t ip, netmask, gw;    /* ip == 0: DHCP */
    uint32_t dhcp_timeout_ms;    /* 0: 10 s */
    uint32_t batching_delay_us;  /* initial W */
    uint8_t batching_delay_given; /* --batching-delay= was on the command line */
    int32_t idle_poll_us;        /* --idle-poll-us; -1: libnom's default (nom_net_start only) */
    uint8_t no_csum_offload;     /* --no-csum-offload (nom_net_start only) */
};

/* The lateness histograms' buckets: the driver's (VNET_LATE_BOUNDS_US), the last one open. */
#define NOM_NET_LATE_BUCKETS 21
#define NOM_NET_LATE_BOUNDS_US \
    { 1, 2, 3, 4, 5, 7, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000 }

/* Counters of the stack's data path: the driver's (see drivers/virtio-net/virtio_net.h) and
 * the netif's own drops. */
struct nom_net_stats {
    uint64_t rx_packets, rx_bytes, rx_batches;
    uint64_t tx_packets, tx_bytes, tx_batches;
    uint64_t tx_kicks, rx_kicks, kicks_suppressed, interrupts;
    uint64_t polls, empty_polls, arms, arm_races;
    uint64_t tx_ring_full, rx_hold_full, rx_drained, rx_bad, tx_bad;
    uint64_t rx_nobuf;   /* received frames dropped: the stack's pbuf pool was empty */
    uint64_t tx_dropped; /* frames the driver refused (ring full, device broken) */
    uint64_t tx_gathers; /* frames of more than VNET_TX_IOV_MAX pieces, flattened first */
    uint64_t syn_dropped; /* new connections' SYNs dropped: the listener's backlog was full */
    uint64_t rx_shed;     /* packets with data dropped on arrival: unread data filled the
                             receive pool past its limit (net/rx_budget.h) */
    uint64_t rx_pool_peak; /* the most receive-pool buffers ever in use at once */
    uint64_t acks_batched; /* ACKs lwIP would have sent at once that a receive batch's one ACK
                              made unnecessary (net/tcp_ack_batch.c) */
    /* Batches by how much longer than W the driver held their oldest frame: the driver's
     * histograms (virtio_net.h, struct vnet_stats): bucket i below NOM_NET_LATE_BOUNDS_US[i]. */
    uint64_t rx_late_hist[NOM_NET_LATE_BUCKETS], tx_late_hist[NOM_NET_LATE_BUCKETS];
};

struct vnet;

/* Parses and removes the options above from argv (updating *argc), acquires the NIC, starts the
 * stack and waits for the address. Prints "net: A.B.C.D/N gw G (dhcp|static) W=US" on stdout.
 * Returns 0, or a negated errno: -EINVAL (malformed option), -ENODEV (no free virtio-net NIC,
 * or the driver failed), -ETIMEDOUT (no DHCP lease in time; the stack keeps trying), -EALREADY
 * (called twice). nom only (the host tests call nom_net_attach()). */
int nom_net_start(int *argc, char **argv);

/* Starts lwIP on an open driver instance with the given addressing and waits for the address
 * as nom_net_start() does. Errors: -EALREADY, -ENOMEM (netif set-up failed), -ETIMEDOUT. */
int nom_net_attach(struct vnet *dev, const struct nom_net_config *cfg);

/* Sets the batching delay W in microseconds (paper 3.6), for the stack and the driver.
 * Returns 0, -EINVAL (above 1 s), -ENODEV (before nom_net_start). */
int nom_net_set_batching_delay_us(uint32_t us);
/* The W in use (0 before nom_net_start). */
uint32_t nom_net_batching_delay_us(void);

/* Copies the counters (zeros before nom_net_start). Never fails. */
void nom_net_stats(struct nom_net_stats *out);

/* The address in use, network byte order (zeros while there is none). Never fails. */
void nom_net_addr(uint32_t *ip, uint32_t *netmask, uint32_t *gw);

#endif /* NOM_NET_H */
