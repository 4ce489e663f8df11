/* netloop.c: drives the stack from libnom's scheduler (see netloop.h). */
#include <stddef.h>
#include <stdio.h>

#include "lwip/init.h"
#include "lwip/timeouts.h"
#include <nom/sched.h>
#include <nom/time.h>

#include "lwip_hooks.h"
#include "netif_virtio.h"
#include "netloop.h"

/* Without an interrupt (VNET_ARM_NO_IRQ) an idle core wakes this often to poll. */
#define NETLOOP_NOIRQ_POLL_US 1000u
/* Frames wait in the netif's backlog (ring full): poll again this soon, since transmit
 * completions raise no interrupt. */
#define NETLOOP_BACKLOG_RETRY_US 20u
/* The longest an exiting application waits for its last frames to leave (netloop_drain). */
#define NETLOOP_DRAIN_MAX_US 1000000u
/* The longest W hold an idle core polls out rather than blocking until its deadline. */
#define NETLOOP_HOLD_POLL_MAX_US 2000u

static struct vnet *loop_dev;
static struct netif *loop_netif;
static struct nom_timer loop_timer;
static uint64_t loop_timer_deadline; /* what loop_timer is armed for, 0 if not armed */
static struct nom_idle_hook loop_hook;

/* Where late batches are released, and what the core did before (issue 11 item 4; off unless
 * built with -DNETLOOP_LATE_TRACE=1, as tools/kvmcost/results/README.md's "Why holds run late"
 * did): a batch released 5 us or more past its deadline is counted by the last thing the loop
 * saw before that release (trace_prev: a socket call, an idle poll that found nothing, one that
 * found work, the core blocking, a timer upcall) and how late it was; the gaps between two idle
 * polls in a row (the core had nothing else to do, so a long gap is time the vCPU did not run)
 * are counted too. Cumulative counts go to the console every 4096th late batch: counters, no
 * printf per event. */
#ifndef NETLOOP_LATE_TRACE
#define NETLOOP_LATE_TRACE 0
#endif
#if NETLOOP_LATE_TRACE
enum { TR_COMMIT, TR_POLL_IDLE, TR_POLL_WORK, TR_BLOCK, TR_TIMER, TR_KINDS };
#define TR_BUCKETS 5 /* late (or gap) in us: < 5, < 20, < 100, < 1000, more */
static const char *const tr_name[TR_KINDS] = {"call", "idlepoll", "pollwork", "block", "timer"};
static uint64_t tr_late[TR_KINDS][TR_BUCKETS], tr_late_us[TR_KINDS], tr_gap[TR_BUCKETS];
static uint64_t tr_late_n, tr_prev_tsc, tr_polls_again;
static int tr_prev = TR_COMMIT;

static int tr_bucket(uint64_t us)
{
    return us < 5 ? 0 : us < 20 ? 1 : us < 100 ? 2 : us < 1000 ? 3 : 4;
}

static uint64_t tr_us(uint64_t tsc)
{
    static uint64_t per_ms;
    if (!per_ms)
        per_ms = nom_us_to_tsc(1000) ? nom_us_to_tsc(1000) : 1;
    return tsc * 1000 / per_ms;
}

static void tr_print(void)
{
    printf("netloop-late: n=%llu", (unsigned long long)tr_late_n);
    for (int k = 0; k < TR_KINDS; k++) {
        printf(" %s=", tr_name[k]);
        for (int b = 0; b < TR_BUCKETS; b++)
            printf("%s%llu", b ? "," : "", (unsigned long long)tr_late[k][b]);
        printf("/%lluus", (unsigned long long)tr_late_us[k]);
    }
    printf(" pollgaps=%llu:", (unsigned long long)tr_polls_again);
    for (int b = 0; b < TR_BUCKETS; b++)
        printf("%s%llu", b ? "," : "", (unsigned long long)tr_gap[b]);
    printf("\n");
}

/* Before a poll: the deadline standing; after: was it a late release? */
static void tr_released(uint64_t due_before, uint64_t now)
{
    if (!due_before || now < due_before || vnet_next_deadline(loop_dev) == due_before)
        return;
    uint64_t late = tr_us(now - due_before);
    if (late < 5)
        return;
    tr_late[tr_prev][tr_bucket(late)]++;
    tr_late_us[tr_prev] += late;
    if ((++tr_late_n & 4095) == 0)
        tr_print();
}

static void tr_event(int kind, uint64_t now)
{
    if (kind == TR_POLL_IDLE && tr_prev == TR_POLL_IDLE) {
        tr_gap[tr_bucket(tr_us(now - tr_prev_tsc))]++;
        tr_polls_again++;
    }
    tr_prev = kind;
    tr_prev_tsc = now;
}
#define TR_DUE(v) uint64_t v = vnet_next_deadline(loop_dev), v##_now = nom_tsc()
#define TR_RELEASED(v) tr_released(v, v##_now)
#define TR_EVENT(kind) tr_event(kind, nom_tsc())
#else
#define TR_DUE(v) (void)0
#define TR_RELEASED(v) (void)0
#define TR_EVENT(kind) (void)0
#endif

void net_stack_init(void)
{
    static int done;
    if (!done) {
        done = 1;
        lwip_init();
    }
}

struct vnet *netloop_device(void)
{
    return loop_dev;
}

/* A BROKEN device (virtio_net.h) never recovers: say so once, or the application just goes
 * silent on the network with no trace of why. */
static void netloop_report_broken(void)
{
    static int said;
    if (!said) {
        said = 1;
        printf("net: the NIC is broken (driver: device reset request or bad ring state); "
               "the network is down\n");
    }
}

static void netloop_timer_fired(void *arg)
{
    (void)arg;
    loop_timer_deadline = 0;
    TR_DUE(due);
    netloop_run();
    TR_RELEASED(due);
    TR_EVENT(TR_TIMER);
}

/* lwIP's next timeout as a TSC deadline (0: none). lwIP's due time (its own milliseconds)
 * changes only when it adds or runs timeouts, which it never does without reading sys_now:
 * while nomnet_sys_now_calls() stands, the deadline computed last stands, and neither lwIP nor
 * the clock is asked again (a removed timeout, sys_untimeout, can leave it early: one wake-up
 * that finds nothing due). Rebuilding it from now + sleep time on every socket call gave a new
 * deadline each time and a timer-heap remove and insert with it (8 per NetPIPE message, about
 * 1,200 of its instructions: tools/bench/insn_profile.py --app netpipe --conns 1). */
static uint64_t lwip_due_tsc, lwip_due_seen = UINT64_MAX;

static __attribute__((noinline)) uint64_t netloop_lwip_deadline_again(void)
{
    static u32_t due_ms;
    u32_t sleep_ms = sys_timeouts_sleeptime();
    if (sleep_ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE) {
        lwip_due_tsc = 0;
    } else {
        u32_t ms = nomnet_sys_now_last() + sleep_ms; /* the sys_now it read: the due time */
        if (lwip_due_tsc == 0 || ms != due_ms) {
            due_ms = ms;
            lwip_due_tsc = nom_tsc() + nom_us_to_tsc(sleep_ms * 1000ull);
        }
    }
    lwip_due_seen = nomnet_sys_now_calls();
    return lwip_due_tsc;
}

/* Inline, as netloop_rearm below: both run at every socket call, and their common case is a
 * compare or two (a call each was 25 instructions, 4.4 times per NetPIPE message; issue 16). */
static inline __attribute__((always_inline)) uint64_t netloop_lwip_deadline(void)
{
    if (nomnet_sys_now_calls() == lwip_due_seen)
        return lwip_due_tsc;
    return netloop_lwip_deadline_again();
}

/* Runs lwIP's timeouts if one may be due: not before the deadline above while it stands.
 * Transmit completions are reaped first: a segment lent to the device (zero-copy transmit,
 * netif_virtio.c) stays referenced until its completion is reaped, and lwIP does not
 * retransmit a referenced segment; idle polls do not reap (the driver's nothing_new). */
static void netloop_check_timeouts(void)
{
    uint64_t due = netloop_lwip_deadline();
    if (due && nom_tsc() >= due) {
        vnet_tx_reap(loop_dev);
        sys_check_timeouts();
    }
}

/* Keeps one timer at the earliest of lwIP's next timeout, extra_deadline and, when the core is
 * about to block (with_batch), the driver's W deadline; an unchanged deadline costs no timer
 * call. While the core runs or polls it needs no timer for W: the idle hook's polls and every
 * socket call (netloop_commit) release a due batch, and arming one per batch cost a system
 * call, two LAPIC timer writes and a timer interrupt with its EOI (VM exits each under KVM:
 * 2.5 of W=10's 3.3 exit-equivalents per memcached request beyond W=0's,
 * tools/bench/holds.py --kvmcost skylake). */
static inline __attribute__((always_inline)) void netloop_rearm(uint64_t extra_deadline,
                                                                 int with_batch)
{
    uint64_t deadline = netloop_lwip_deadline();
    uint64_t batch_due = vnet_next_deadline(loop_dev);
    uint64_t dev_deadline = with_batch ? batch_due : 0;
    /* A busy core gets no timer for W: libnom releases a due batch at a mutex release if no
     * socket call or idle turn comes first (nom_soft_deadline_set). */
    nom_soft_deadline_set(batch_due);

    if (dev_deadline && (deadline == 0 || dev_deadline < deadline))
        deadline = dev_deadline;
    if (extra_deadline && (deadline == 0 || extra_deadline < deadline))
        deadline = extra_deadline;
    if (deadline == 0 || deadline == loop_timer_deadline)
        return;
    loop_timer_deadline = deadline;
    nom_timer_add(&loop_timer, deadline, netloop_timer_fired, NULL);
}

int netloop_run(void)
{
    int n, waiting;
    if (loop_dev == NULL)
        return 0;
    nom_preempt_disable();
    n = vnet_poll(loop_dev, netif_virtio_rx, loop_netif);
    nomnet_tcp_ack_batch_end();
    if (n == -VNET_EIO)
        netloop_report_broken();
    netloop_check_timeouts();
    waiting = netif_virtio_tx_drain(loop_netif);
    vnet_tx_commit(loop_dev);
    netloop_rearm(waiting ? nom_tsc() + nom_us_to_tsc(NETLOOP_BACKLOG_RETRY_US) : 0, 0);
    nom_preempt_enable();
    return n > 0 ? n : 0;
}

/* Every socket call ends here, so a busy core passes often: a W deadline already past is
 * served now (a soft timer, Aron & Druschel, TOCS 2000) instead of when the timer's upcall gets
 * the core. Under TCG that upcall came 100-200 us late when threads kept the core busy
 * (tools/bench/holds.py: memcached "many" at W=10, rx p50 hold 150-200 us). */
void netloop_commit(void)
{
    if (loop_dev == NULL)
        return;
    uint64_t due = vnet_next_deadline(loop_dev);
    if (due && nom_tsc() >= due) {
        TR_DUE(tdue);
        netloop_run();
        TR_RELEASED(tdue);
        TR_EVENT(TR_COMMIT);
        return;
    }
    TR_EVENT(TR_COMMIT);
    /* No vnet_tx_commit here: the deadline above is the earlier of the transmit and receive
     * batches', so a transmit batch not due by it is not due (issue 16: a call per socket call). */
    if (netif_virtio_tx_drain(loop_netif))
        netloop_rearm(nom_tsc() + nom_us_to_tsc(NETLOOP_BACKLOG_RETRY_US), 0);
    else
        netloop_rearm(0, 0);
}

void netloop_rx_flush(void)
{
    if (loop_dev != NULL) {
        vnet_rx_flush(loop_dev, netif_virtio_rx, loop_netif);
        nomnet_tcp_ack_batch_end();
    }
}

/* A W hold polls (net/README.md): while a batch waits for a deadline at most
 * NETLOOP_HOLD_POLL_MAX_US away the hook asks libnom to poll on (NOM_IDLE_POLL_AGAIN: idle
 * polling, not work) instead of blocking when its idle poll time runs out. Blocking there
 * released the batch only when the timer's interrupt woke the core: under TCG 50-150 us late (HLT wake-up
 * through QEMU's main loop; tools/bench/holds.py, memcached "many", W given as W x D). */
static int netloop_idle_poll(void *arg)
{
    (void)arg;
    TR_DUE(tdue);
    uint64_t lent_back = netif_virtio_tx_lent_back();
    int n = netloop_run();
    TR_RELEASED(tdue);
    /* A turn that took lent frames back (zero-copy transmit: pbufs freed, heap blocks
     * returned) did work, though it delivered nothing: counted so, not as idle polling. */
    if (n == 0 && netif_virtio_tx_lent_back() != lent_back)
        n = 1;
    uint64_t due = loop_dev ? vnet_next_deadline(loop_dev) : 0;
    int64_t left = (int64_t)(due - nom_tsc());
    if (n == 0 && due && left <= (int64_t)nom_us_to_tsc(NETLOOP_HOLD_POLL_MAX_US)) {
        TR_EVENT(TR_POLL_IDLE);
        return NOM_IDLE_POLL_AGAIN; /* idle polling, not work (the plugin's marks) */
    }
    TR_EVENT(n ? TR_POLL_WORK : TR_POLL_IDLE);
    return n;
}

/* Nothing to do for a while: interrupt mode. A device without an interrupt is polled by the
 * timer instead; a broken one (-VNET_EIO) must not keep the core spinning either. */
static int netloop_idle_arm(void *arg)
{
    int r;
    (void)arg;
    nom_preempt_disable();
    r = vnet_arm(loop_dev);
    if (r == VNET_ARM_NO_IRQ)
        netloop_rearm(nom_tsc() + nom_us_to_tsc(NETLOOP_NOIRQ_POLL_US), 1);
    else if (r == VNET_ARM_IDLE)
        netloop_rearm(0, 1); /* the core blocks: the batch's deadline must wake it */
    if (r == VNET_ARM_IDLE || r == VNET_ARM_NO_IRQ)
        TR_EVENT(TR_BLOCK);
    nom_preempt_enable();
    return r == VNET_ARM_BUSY;
}

/* An orderly exit: what the stack has sent must leave first. The kernel resets a NIC when its
 * owner exits, and the device transmits after the notify, not during it (QEMU in its main loop):
 * an answer sent just before exit() was lost whenever the host ran that loop late. netecho's
 * answer to "exit" was, in a make test run under load (issue 10). Bounded: a device that never
 * completes does not hold the exit up for more than NETLOOP_DRAIN_MAX_US. */
void netloop_drain(void)
{
    uint64_t deadline;
    if (loop_dev == NULL)
        return;
    deadline = nom_tsc() + nom_us_to_tsc(NETLOOP_DRAIN_MAX_US);
    nom_preempt_disable();
    do {
        int waiting = netif_virtio_tx_drain(loop_netif);
        vnet_tx_flush(loop_dev);
        if (waiting == 0 && vnet_tx_outstanding(loop_dev) <= 0) /* < 0: a broken device */
            break;
        __builtin_ia32_pause();
    } while (nom_tsc() < deadline);
    nom_preempt_enable();
}

void netloop_attach(struct vnet *dev, struct netif *netif)
{
    loop_dev = dev;
    loop_netif = netif;
    loop_hook.poll = netloop_idle_poll;
    loop_hook.arm = netloop_idle_arm;
    loop_hook.arg = NULL;
    nom_idle_hook_add(&loop_hook);
    netloop_rearm(0, 0);
}
