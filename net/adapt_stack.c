/* adapt_stack.c: what the stack lends libnom's profit-maximizing controller (nom/adapt.h,
 * struct nom_adapt_stack): the batching delay knob of nom/net.h, the counts of active TCP
 * connections and of requests in flight, read on lwIP's own list (NO_SYS=1, net/README.md:
 * the stack's lock is nom_preempt_disable). lwIP stamps pcb->tmr with tcp_ticks (one tick per
 * TCP_SLOW_INTERVAL, 500 ms) on every segment a connection receives (tcp_in.c), which is
 * exactly "a user is talking on it" without any counter of our own on the data path. */
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include <nom/adapt.h>
#include <nom/net.h>
#include <nom/sched.h>

#include "adapt_stack.h"
#include "sock.h"

/* Received within the last ACTIVE_MS (to one tick): a user thinking longer than that between
 * requests is not loading the server now. */
#define ACTIVE_MS 1000u
#define ACTIVE_TICKS (ACTIVE_MS / TCP_SLOW_INTERVAL)

static unsigned active_conns(void)
{
    unsigned n = 0;
    nom_preempt_disable();
    for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->state == ESTABLISHED && (u32_t)(tcp_ticks - pcb->tmr) <= ACTIVE_TICKS)
            n++;
    }
    nom_preempt_enable();
    return n;
}

/* The most requests in flight one connection counts for: twice the count that votes "many"
 * (nom/adapt.h), so a stream alone votes "many" and its thousands of segments between two
 * answers do not swamp the figure the controller reports. */
#define CONN_IN_FLIGHT_MAX (2 * NOM_ADAPT_MANY_CONNS)

/* Requests in flight on one established connection: 1 if it holds received data the
 * application has not read (lwIP shrinks rcv_wnd by what it queues and tcp_recved gives it
 * back as the application reads, a few KiB at a time: sock.h's rx_unopened) or an answer
 * queued, sent and not acknowledged; on an accepted connection, if more, the whole receive
 * windows received since the application last answered (sock.h's rx_unanswered). A client waiting for each answer (a single user,
 * each of many users, NetPIPE's ping-pong, even of 64 KiB messages) has at most one out;
 * one that streams (NetPIPE's streaming: megabytes between two answers) has many. Windows,
 * not segments: a request of 45 segments is still one request. The socket is alive while
 * the pcb names it (tcpsock_release_pcb clears the pcb's arg first). */
static unsigned conn_in_flight(const struct tcp_pcb *pcb)
{
    const struct nomsock *s = pcb->callback_arg;
    tcpwnd_size_t read_back = s != NULL ? s->rx_unopened : 0;
    unsigned n = pcb->rcv_wnd + read_back < TCP_WND_MAX(pcb) || pcb->unsent != NULL ||
                 pcb->unacked != NULL;
    if (s != NULL && s->accepted) {
        uint32_t windows = s->rx_unanswered / TCP_WND_MAX(pcb);
        if (windows > n)
            n = windows < CONN_IN_FLIGHT_MAX ? (unsigned)windows : CONN_IN_FLIGHT_MAX;
    }
    return n;
}

/* Requests in flight now (nom/adapt.h), over every established connection. An idle open
 * connection has none. */
static unsigned requests_in_flight(void)
{
    unsigned n = 0;
    nom_preempt_disable();
    for (const struct tcp_pcb *pcb = tcp_active_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->state == ESTABLISHED)
            n += conn_in_flight(pcb);
    }
    nom_preempt_enable();
    return n;
}

/* The driver's counters that online learning reads (nom/adapt.h, --adapt-mode=online). */
static void counters(struct nom_adapt_counters *out)
{
    struct nom_net_stats s;
    struct nomsock_residence r;
    nom_net_stats(&s);
    nom_preempt_disable();
    tcpsock_residence(&r);
    nom_preempt_enable();
    *out = (struct nom_adapt_counters){.tx_bytes = s.tx_bytes, .rx_packets = s.rx_packets,
                                       .exits = s.tx_kicks + s.rx_kicks + s.interrupts,
                                       .requests_timed = r.requests,
                                       .residence_us_sum = r.us_sum,
                                       .residence_us_sq_sum = r.us_sq_sum};
}

/* The W --batching-delay= fixed (nom/net.h), -1: none. */
static long fixed_w_us = -1;
static long fixed_batching_delay_us(void) { return fixed_w_us; }

static const struct nom_adapt_stack lwip_stack = {
    .active_conns = active_conns,
    .requests_in_flight = requests_in_flight,
    .set_batching_delay_us = nom_net_set_batching_delay_us,
    .batching_delay_us = nom_net_batching_delay_us,
    .counters = counters,
    .fixed_batching_delay_us = fixed_batching_delay_us,
};

void net_adapt_stack_register(long fixed)
{
    fixed_w_us = fixed;
    nom_adapt_stack_register(&lwip_stack);
}
