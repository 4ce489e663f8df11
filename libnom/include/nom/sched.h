/*
 * nom/sched.h: libnom's user-level scheduler, for library writers (drivers, the network
 * stack). Paper 3.3: the application schedules its own threads on the cores it holds and
 * blocks the core, instead of spinning, when it has nothing to do.
 *
 * Contexts. "Thread context" is ordinary code of a user thread; it may block. "Scheduler
 * context" is where libnom runs idle hooks, timer callbacks and IRQ handlers: on some thread's
 * stack with preemption disabled; code there MUST NOT block (no nom_waitq_wait, no mutex that
 * may be contended, no sleeping: libnom panics with "a callback in scheduler context tried to
 * block") and should be short. Callbacks may malloc and free (newlib's locks are never held
 * across a scheduling point) but should not use stdio (a thread may hold stdout while it
 * waits). Locks a callback takes belong to the core's callback identity, not to the thread
 * whose stack it borrows, and errno is preserved for that thread. No libnom callback runs in
 * the raw upcall context: upcalls only record what happened, and the scheduler runs the
 * callbacks at the next scheduling point (when the interrupted thread is preemptible, that is
 * immediately).
 *
 * Atomicity. On one core, code between nom_preempt_disable() and nom_preempt_enable() runs
 * without any other thread or callback interleaving; this is the lock of the run queue, the
 * wait queues, the timers and (by convention) the network stack. Checking a condition and then
 * waiting for it inside such a section cannot lose a wake-up.
 *
 * Idle. When no thread is runnable the scheduler calls every idle hook's poll (> 0: did work);
 * after the hooks found nothing for the idle poll budget (a number of turns, each polling
 * every hook once, or a time: nom_sched_set_idle_poll_turns, nom_sched_set_idle_poll_us) it
 * calls every arm (re-enable interrupts; non-zero: work already pending, keep
 * polling), and only if all return 0 blocks the core with NOM_SYS_BLOCK until the earliest
 * timer deadline, an interrupt or a notification.
 *
 * Preemption. A thread that runs for a whole slice (nom_sched_set_slice_us, default 10 ms)
 * while others are runnable is preempted through a NOM_UPCALL_TIMER; sections with preemption
 * disabled are never preempted (the switch happens at nom_preempt_enable()).
 */
#ifndef NOM_SCHED_H
#define NOM_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <nom/waitq.h>

/* An idle hook's poll found nothing yet must keep the core polling (not arm and block): a
 * batch held for W is due soon. The turn counts as idle polling, and the budget starts over
 * once the hooks stop asking. */
#define NOM_IDLE_POLL_AGAIN (-1)

struct nom_idle_hook {
    /* > 0 if it did work (e.g. received packets, woke threads), 0 if it found nothing,
     * NOM_IDLE_POLL_AGAIN if it found nothing but the core should go on polling. */
    int (*poll)(void *arg);
    int (*arm)(void *arg);  /* re-enables interrupts; non-zero if work is already pending */
    void *arg;
    struct nom_idle_hook *next; /* libnom's */
};

struct nom_timer {
    uint64_t deadline;      /* TSC */
    void (*fn)(void *arg);  /* runs in scheduler context */
    void *arg;
    size_t heap_slot;       /* libnom's: 0 when not armed */
};

/* Adds an idle hook (scheduler context callbacks). The hook must stay valid forever. */
void nom_idle_hook_add(struct nom_idle_hook *hook);
/* A soft timer (Aron & Druschel, TOCS 2000) for the idle hooks: the TSC time from which one of
 * them has work due although nothing interrupts (a network batch held for W), 0 for none.
 * Past it, libnom polls the hooks not only when idle or yielding, but also when a thread
 * releases a mutex (at most once per release, never with preemption disabled or inside a
 * callback): a thread that computes between socket calls, e.g. memcached's LRU maintainer
 * over its slab classes, then does not hold the batch back, and nothing arms a timer for it.
 * One value per core: the caller gives the earliest of its deadlines. The poll a release makes
 * clears it, and the hook sets it again if something is still held. */
void nom_soft_deadline_set(uint64_t tsc);
/* The idle poll budget, in turns or in time, whichever was set last. Turns: how many times at
 * most every hook is polled (0 and 1 both mean once) before arming interrupts and blocking.
 * Time: how long idle hooks poll, in the guest's microseconds, whatever the turns.
 *
 * Default: 50 us of time (issue 16: spin at most about a real host's round trip of a single
 * client, then arm the interrupt and halt; KVM's own halt polling waits up to 200 us). Time,
 * not turns, because under the exit-cost model the guest's clock is dilated by D (tools/kvmcost,
 * guest time = wall / D) and then its microseconds are a KVM host's: the budget means there
 * what it would mean on hardware. NetPIPE 1 KiB ping-pong, one client, W = 0, per message:
 * work + idle polling guest instructions, interrupts, and the ledger's exits (every kind)
 * (python3 tools/bench/insn_profile.py --app netpipe --conns 1 --seconds 10 --runs 3
 * [--idle-poll-us US] [--kvmcost skylake], medians; TCG, host load 4-5 on 2 cores):
 *
 *   budget    exit-cost model, D 4.7               raw TCG (clock not dilated)
 *   4 turns   7,349 + 817,    0.53 irq, 2.11 exits  7,328 + 940,   0.65 irq
 *   25 us     7,259 + 21,956, 0.30 irq, 1.63 exits  7,302 + 3,866, 0.56 irq
 *   50 us     7,181 + 25,047, 0.25 irq, 1.51 exits  7,205 + 6,408, 0.46 irq
 *   100 us    7,111 + 33,832, 0.12 irq, 1.25 exits  7,021 + 9,951, 0.30 irq
 *
 * memcached "single" on the same model (tools/kvmcost/results/README.md, idle-poll check):
 * 0, 20, 50, 200 us gave 3.04, 2.26, 1.14, 1.23 exits and 1.01, 0.62, 0.06, 0.11 interrupts
 * per request. 50 us halves NetPIPE's interrupts and HLT wake-ups of 4 turns where exits are
 * priced; 100 us would cut them again but spins past a hardware host's round trip (20-50 us)
 * for the slow tail of this loaded host's. Idle polling is never work (the plugin counts it
 * apart).
 * NOM_IDLE_POLL_TURNS_DEFAULT is the turns budget used before (nom_sched_set_idle_poll_turns
 * still takes one; the controller's idle-poll knob, libnom/src/profit, sets microseconds). */
#define NOM_IDLE_POLL_US_DEFAULT 50
#define NOM_IDLE_POLL_TURNS_DEFAULT 4
void nom_sched_set_idle_poll_turns(uint64_t turns);
void nom_sched_set_idle_poll_us(uint64_t us);
/* Preemption time slice; default 10 ms; 0 turns time-slice preemption off. */
void nom_sched_set_slice_us(uint64_t us);

/* Routes NOM_UPCALL_IRQ with this cookie to fn(arg), run in scheduler context soon after the
 * upcall (fn NULL removes it). Up to 64 cookies; a cookie is any value, kept as given.
 * Returns 0, or -ENOSPC when 64 cookies are already routed. */
int nom_irq_handler_set(uint64_t cookie, void (*fn)(void *arg), void *arg);
/* Routes NOM_UPCALL_NOTIFY bits to fn(bits, arg) in scheduler context (one handler). */
void nom_notify_handler_set(void (*fn)(uint64_t bits, void *arg), void *arg);

/* Blocks the calling thread on wq until woken or the TSC reaches deadline_tsc (0: none).
 * May be called with preemption disabled (the count is kept across the block). Thread
 * context only. Returns 0 when woken, -ETIMEDOUT at the deadline. */
int nom_waitq_wait(struct nom_waitq *wq, uint64_t deadline_tsc);
/* Makes every thread waiting on wq runnable. Any context. */
void nom_waitq_wake_all(struct nom_waitq *wq);
/* Makes the longest-waiting thread on wq runnable; 1 if there was one, else 0. Any context. */
int nom_waitq_wake_one(struct nom_waitq *wq);

/* Nesting counter: while > 0 on this core, no preemption and no callbacks interleave. */
void nom_preempt_disable(void);
/* Decrements; at 0, runs pending callbacks and switches if a preemption was deferred. */
void nom_preempt_enable(void);

/* Lets other runnable threads run (thread context). The idle hooks' poll runs first, so that
 * work waiting on a device (a network batch due, frames for a blocked thread) is taken in and
 * its threads run too: a yield is a soft-timer trigger point, like a socket call. */
void nom_yield(void);
/* Sleeps the calling thread until the TSC reaches deadline_tsc (thread context). */
void nom_sleep_until(uint64_t deadline_tsc);

/* Arms t to run fn(arg) in scheduler context once the TSC reaches deadline_tsc; re-adding an
 * armed timer moves it. Any context except the raw upcall. It runs at the first scheduling
 * point or idle-poll turn from the deadline on (a blocked core wakes for it), or at most
 * 200 us later by the hardware timer if the running thread reaches none (sched.c says why). */
void nom_timer_add(struct nom_timer *t, uint64_t deadline_tsc, void (*fn)(void *), void *arg);
/* Disarms t; 1 if it was armed, 0 if it had fired or was never added. */
int nom_timer_cancel(struct nom_timer *t);

#endif /* NOM_SCHED_H */
