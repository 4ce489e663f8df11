/*
 * libnom.h: libnom's private index: the thread and core structures and every function that
 * crosses a file, grouped by the file that defines it (public interfaces are in include/nom).
 */
#ifndef NOM_LIBNOM_H
#define NOM_LIBNOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <reent.h>
#include <pthread.h>
#include <nom/abi.h>
#include <nom/sched.h>
#include <nom/time.h>
#include "runq.h"

#define NOM_STACK_DEFAULT (8ul << 20)   /* default thread stack reservation */
#define NOM_STACK_GROW_PAGES 16         /* pages mapped per stack fault */
#define NOM_MAIN_STACK_MAX (64ul << 20) /* the main thread's stack reservation */

enum thread_state { T_RUNNING, T_RUNNABLE, T_BLOCKED, T_ZOMBIE };

struct nom_waiter {
    struct nom_waiter *next;
    struct nom_thread *thread;
    struct nom_waitq *wq;
    int woken;
    int (*ready)(void *arg);        /* NULL, or: wake only if this says so (sched_wake_ready) */
    void *ready_arg;
    uint64_t deadline;              /* TSC, 0: none */
};

/* A stack reservation: [base, top) of address space; [base, base + guard) is never mapped,
 * [mapped_low, top) is mapped; the fault handler maps downward on demand (fault.c). */
struct stack_region {
    uintptr_t base, top, guard, mapped_low;
};

struct nom_thread {
    uint64_t saved_rsp;             /* switch.S: callee-saved registers sit there */
    struct nom_runq_link rq;        /* on the run queue while T_RUNNABLE */
    struct nom_thread *all_next, *all_prev;
    struct nom_thread *reap_next;   /* on the reap list once a detached thread exited */
    unsigned id;
    char name[16];
    int state;
    int preempt_saved;              /* the core's preempt count while switched out */
    void *(*start)(void *);
    void *arg;
    void *retval;
    int detached;
    int joined;                     /* a joiner claimed it */
    int main;                       /* the initial thread */
    struct nom_waitq join_wq;
    struct stack_region stack;
    struct nom_timer sleep_timer;   /* may outlive the timed wait it was armed for (sched.c) */
    struct nom_waiter *timed_wait;  /* the thread's wait with a deadline now, or NULL */
    struct _reent *reent;
    const void *specific[PTHREAD_KEYS_MAX];
    struct nom_cleanup *cleanups;   /* innermost pthread_cleanup_push first */
    uintptr_t tp;                   /* thread pointer (FS base) for __thread data, 0: none */
    void *tls_mem;                  /* its block (tlsblock.c) */
};

/* One per core the application holds (one today; see runq.h). */
struct nom_cpu {
    struct nom_thread *current;
    volatile int preempt_count;
    volatile int work_pending;      /* upcalls recorded work for the scheduler */
    volatile uint64_t irq_pending;  /* bit i: cookie slot i interrupted */
    volatile uint64_t notify_pending;
    volatile int timer_fired;
    uint64_t timer_armed;           /* deadline given to NOM_SYS_TIMER_SET, 0 if none */
    int timer_stale;                /* a timer it stood for has run: move it (sched.c) */
    uint64_t slice_start;           /* TSC when current started running */
    uint64_t blocked_tsc;           /* TSC spent blocked in NOM_SYS_BLOCK (getrusage) */
    struct nom_runq runq;
    struct nom_upcall_ctl ctl;
    struct nom_wake_events wake_events; /* what NOM_SYS_BLOCK handed over (sched.c block_core) */
    int in_callback;                /* running idle hooks / IRQ, notify, timer callbacks */
    struct nom_thread callbacks;    /* who owns locks taken by those callbacks */
};

/* start.c */
extern uint32_t nom_app_id;
extern char **environ;
/* Writes a message straight to the console (no stdio; safe in upcall context). */
void nom_console_puts(const char *s);
/* Formats "0x" + hex of v into buf (at least 19 bytes); returns buf. */
char *nom_fmt_hex(char *buf, uint64_t v);
/* Formats decimal v into buf (at least 21 bytes); returns buf. */
char *nom_fmt_dec(char *buf, uint64_t v);
__attribute__((noreturn)) void nom_panic(const char *what);

/* sched.c */
/* One core today: every context would find its own struct nom_cpu through a per-core register
 * (see the report's ABI request), and the run queue lock would become a spinlock. Inline,
 * with the two below: they run around every lock and socket call (dozens of times per
 * memcached request; tools/bench/insn_profile.py). */
extern struct nom_cpu nom_cpu0;
static inline struct nom_cpu *nom_cpu_self(void) { return &nom_cpu0; }
/* Who takes a lock now: the running thread, or the core's callback identity while callbacks
 * run on a thread's stack (so a callback never "re-enters" a lock that thread holds). */
static inline struct nom_thread *sched_lock_owner(void)
{
    struct nom_cpu *c = nom_cpu_self();
    return c->in_callback ? &c->callbacks : c->current;
}
/* mutex.c: bit 0 of a mutex's owner word says a thread may be waiting for it (threads are
 * aligned, so the bit is free); the owner is the rest. */
#define MUTEX_CONTENDED ((uintptr_t)1)
static inline struct nom_thread *mutex_owner(const pthread_mutex_t *m)
{
    return (struct nom_thread *)((uintptr_t)m->owner & ~MUTEX_CONTENDED);
}
/* nom_preempt_disable/enable (nom/sched.h) for libnom's own use, inlined. */
static inline void preempt_off(void)
{
    nom_cpu_self()->preempt_count++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
void preempt_on_slow(struct nom_cpu *c);
static inline void preempt_on(void)
{
    struct nom_cpu *c = nom_cpu_self();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int n = --c->preempt_count;
    if (n < 0 || (n == 0 && c->work_pending))
        preempt_on_slow(c);
}
/* The idle hooks' soft timer (nom_soft_deadline_set): checked by every mutex release. */
extern uint64_t nom_soft_deadline;
void sched_soft_timer_run(void);
static inline void sched_soft_timer_check(void)
{
    uint64_t due = nom_soft_deadline;
    if (__builtin_expect(due != 0, 0) && nom_tsc() >= due)
        sched_soft_timer_run();
}
/* TSC at start-up (start.c) */
extern uint64_t nom_start_tsc;
void sched_init(struct nom_thread *main_thread);
/* Makes t runnable (scheduler lock = preempt disabled held by caller). */
void sched_make_runnable(struct nom_thread *t);
/* Switches away from the current thread, whose state the caller set; preempt disabled. */
void sched_schedule(void);
/* nom_waitq_wait with a readiness test the waker evaluates (sched_wake_ready): the thread
 * is woken only when ready(arg) is non-zero. 0, or -ETIMEDOUT. */
int sched_wait_ready(struct nom_waitq *wq, uint64_t deadline_tsc, int (*ready)(void *),
                     void *arg);
/* Wakes the waiters of wq whose readiness test passes (or that have none). Any context. */
void sched_wake_ready(struct nom_waitq *wq);
/* Called by the preemption trampoline (switch.S) in the interrupted thread. */
void nom_sched_preempt_point(void);
/* First thing a new thread does: arms the slice timer, enables preemption. */
void sched_thread_start(void);
/* Upcall side: records a timer / IRQ / notify event. */
void sched_upcall_timer(struct nom_cpu *c);
void sched_upcall_irq(struct nom_cpu *c, uint64_t cookie);
void sched_upcall_notify(struct nom_cpu *c, uint64_t bits);

/* switch.S */
/* Saves callee-saved state on from's stack and resumes to (nom_thread.saved_rsp). */
void nom_switch(struct nom_thread *from, struct nom_thread *to);
/* Runs fn(arg) on the stack ending at top; never returns. */
__attribute__((noreturn)) void nom_call_on_stack(void (*fn)(void *), void *arg, uintptr_t top);
/* Entry of a new thread's first switch: calls thread_entry(). */
void nom_thread_trampoline(void);
/* Injected by the upcall handler: saves every register, calls nom_sched_preempt_point. */
void nom_preempt_trampoline(void);
/* Upcall entry (fxsave, dispatch, fxrstor, upcall_return). */
void nom_upcall_entry(void);

/* thread.c */
/* Makes the initial context thread 1 with a growable stack and calls fn(arg) on it. */
__attribute__((noreturn)) void thread_start_main(void (*fn)(void *), void *arg);
__attribute__((noreturn)) void thread_entry(void);
/* The thread whose stack reservation holds addr, or NULL. */
struct nom_thread *thread_by_stack_addr(uintptr_t addr);
/* Ends the current thread with value (pthread_exit without the destructors). */
__attribute__((noreturn)) void thread_exit_now(void *value);

/* tlsblock.c */
/* Bytes a thread's TLS block needs (0 if the program has no thread-local data). */
size_t tls_block_size(void);
/* Lays out a block in mem (tls_block_size bytes); returns the thread pointer, or 0. */
uintptr_t tls_block_init(void *mem);
/* Makes tp this context's FS base (nothing for 0). */
void tls_activate(uintptr_t tp);

/* upcall.c */
void upcall_init(void);
void nom_upcall_dispatch(struct nom_upcall_frame *f);

/* fault.c */
/* Handles a page fault upcall; returns normally when the access can be retried. */
void fault_handle(struct nom_upcall_frame *f);
/* Maps stack pages so that [addr, top) of s is mapped; 0 or -1 (outside / guard). */
int stack_ensure_mapped(struct stack_region *s, uintptr_t addr);

/* vmspace.c: address-space arenas */
enum vm_arena { VM_MMAP, VM_DMA, VM_STACKS, VM_TIMERS, VM_ARENAS };
/* Reserves bytes (page multiple) of address space in arena; 0 if exhausted. */
uintptr_t vm_reserve(enum vm_arena a, size_t bytes);
/* Returns a reservation to its arena for reuse. */
void vm_release(enum vm_arena a, uintptr_t addr, size_t bytes);
/* Whether [addr, addr + bytes) lies inside arena's range. */
bool vm_contains(enum vm_arena a, uintptr_t addr, size_t bytes);

/* heap.c */
void heap_init(void);

/* fd.c */
void fd_init(void);
/* Writes what the console descriptors hold of an unfinished line (console.c); before exit. */
void console_flush(void);

#endif /* NOM_LIBNOM_H */
