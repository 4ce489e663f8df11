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

struct nom_idle_hook {
    int (*poll)(void *arg); /* > 0 if it did work (e.g. received packets, woke threads) */
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
/* The idle poll budget, in turns or in time, whichever was set last. Turns: how many times at
 * most every hook is polled (0 and 1 both mean once) before arming interrupts and blocking.
 * Default 4 turns: NetPIPE 1 KiB ping-pong under TCG, guest instructions per message work +
 * idle polling and interrupts per message (python3 tools/bench/insn_profile.py --app netpipe
 * --conns 1 --seconds 10 --runs 3, medians): 1 turn 13,277 + 514 and 0.77; 4 turns 12,900 +
 * 1,809 and 0.68; 16 turns 13,238 + 6,142 and 0.61; 64 turns 12,630 + 10,881 and 0.62; the
 * old 50 us 13,198 + 8,686 and 0.70. Time: how long idle hooks poll, whatever the turns. */
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

/* Lets other runnable threads run (thread context). */
void nom_yield(void);
/* Sleeps the calling thread until the TSC reaches deadline_tsc (thread context). */
void nom_sleep_until(uint64_t deadline_tsc);

/* Arms t to run fn(arg) in scheduler context once the TSC reaches deadline_tsc; re-adding an
 * armed timer moves it. Any context except the raw upcall. */
void nom_timer_add(struct nom_timer *t, uint64_t deadline_tsc, void (*fn)(void *), void *arg);
/* Disarms t; 1 if it was armed, 0 if it had fired or was never added. */
int nom_timer_cancel(struct nom_timer *t);

#endif /* NOM_SCHED_H */
