/* sched.c: the user-level scheduler (paper 3.3): a FIFO run queue per core, timers in a
 * min-heap, idle hooks polled then armed before the core blocks, and time-slice preemption
 * through NOM_UPCALL_TIMER. The contract for library writers is include/nom/sched.h. */
#include <errno.h>
#include <stddef.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>
#include "libnom.h"
#include "timerheap.h"

#define IRQ_ROUTES 64
#define TIMER_SLOTS_RESERVE (1ul << 30) /* address space for the timer heap's slot array */

struct nom_cpu nom_cpu0;

static uint64_t slice_us = 10000;
/* The idle poll's budget: a number of turns (one turn polls every hook once: about 300 guest
 * instructions with net's loop) or a time, whichever was set last; by default a time,
 * NOM_IDLE_POLL_US_DEFAULT (sched.h has the figures it was chosen by). */
static uint64_t idle_poll_turns = UINT64_MAX, idle_poll_us = NOM_IDLE_POLL_US_DEFAULT;
static uint64_t idle_poll_tsc; /* idle_poll_us in TSC ticks once sched_idle needed it, or 0 */
static struct nom_idle_hook *hooks;
static struct {
    uint64_t cookie;
    void (*fn)(void *);
    void *arg;
} irq_routes[IRQ_ROUTES];
static unsigned nroutes;
static void (*notify_fn)(uint64_t, void *);
static void *notify_arg;

static int timer_slots_grow(struct nom_timerheap *h, size_t need);
static struct nom_timerheap timers = { NULL, 0, 0, timer_slots_grow };

#define thread_of_link(l) \
    ((struct nom_thread *)((char *)(l) - offsetof(struct nom_thread, rq)))

void sched_init(struct nom_thread *main_thread)
{
    nom_cpu0.current = main_thread;
    main_thread->state = T_RUNNING;
    nom_cpu0.slice_start = nom_tsc();
}

void nom_sched_set_slice_us(uint64_t us) { slice_us = us; }
void nom_sched_set_idle_poll_us(uint64_t us)
{
    idle_poll_us = us;
    idle_poll_tsc = 0;
    idle_poll_turns = UINT64_MAX;
}

void nom_sched_set_idle_poll_turns(uint64_t turns)
{
    idle_poll_turns = turns;
    idle_poll_us = UINT64_MAX;
    idle_poll_tsc = 0;
}

void nom_idle_hook_add(struct nom_idle_hook *hook)
{
    preempt_off();
    hook->next = hooks;
    hooks = hook;
    preempt_on();
}

int nom_irq_handler_set(uint64_t cookie, void (*fn)(void *), void *arg)
{
    int ret = -ENOSPC;
    preempt_off();
    for (unsigned i = 0; i < IRQ_ROUTES; i++) {
        if ((i < nroutes && irq_routes[i].cookie == cookie) || i == nroutes) {
            irq_routes[i].cookie = cookie;
            irq_routes[i].fn = fn;
            irq_routes[i].arg = arg;
            if (i == nroutes)
                nroutes++;
            ret = 0;
            break;
        }
    }
    preempt_on();
    return ret;
}

void nom_notify_handler_set(void (*fn)(uint64_t, void *), void *arg)
{
    preempt_off();
    notify_fn = fn;
    notify_arg = arg;
    preempt_on();
}

/* ---- upcall side: only record, never run callbacks (see nom/sched.h) ---- */

void sched_upcall_timer(struct nom_cpu *c)
{
    c->timer_fired = 1;
    c->work_pending = 1;
}

void sched_upcall_irq(struct nom_cpu *c, uint64_t cookie)
{
    for (unsigned i = 0; i < nroutes; i++) {
        if (irq_routes[i].cookie == cookie) {
            __atomic_fetch_or(&c->irq_pending, 1ull << i, __ATOMIC_SEQ_CST);
            c->work_pending = 1;
            return;
        }
    }
}

void sched_upcall_notify(struct nom_cpu *c, uint64_t bits)
{
    __atomic_fetch_or(&c->notify_pending, bits, __ATOMIC_SEQ_CST);
    c->work_pending = 1;
}

/* ---- timers ---- */

/* The slot array lives in its own reserved region and grows by mapping pages, so adding a
 * timer never calls malloc (scheduler context must not block on the malloc lock). */
static int timer_slots_grow(struct nom_timerheap *h, size_t need)
{
    static uintptr_t base;
    if (!base && !(base = vm_reserve(VM_TIMERS, TIMER_SLOTS_RESERVE)))
        return -1;
    size_t have = h->cap * sizeof(struct nom_timer *);
    size_t want = need * 2 * sizeof(struct nom_timer *);
    want = (want + NOM_PAGE_SIZE - 1) & ~(NOM_PAGE_SIZE - 1);
    if (want > TIMER_SLOTS_RESERVE ||
        nom_sys_mem_map(base + have, (want - have) / NOM_PAGE_SIZE,
                        NOM_MAP_READ | NOM_MAP_WRITE) < 0)
        return -1;
    h->slots = (struct nom_timer **)base;
    h->cap = want / sizeof(struct nom_timer *);
    return 0;
}

/* Timers are soft while the core runs (Aron & Druschel, TOCS 2000): a due timer runs at the
 * next scheduling point or idle-poll turn, which under load come every few microseconds, and
 * a core about to block hands the kernel the exact deadline (block_core). The hardware timer
 * (NOM_SYS_TIMER_SET) is only a backstop, TIMER_BACKSTOP_US after the deadline, for a thread
 * that reaches no scheduling point: a timer interrupt is two VM exits and an upcall under KVM,
 * and under TCG its delivery waits for QEMU's big lock. memcached's LRU maintainer sleeps 1 ms
 * at a time; its wake-up by interrupt was most of what held W = 40 batches late (issue 11,
 * results/holds-2026-12-02-soft-deadline). */
#define TIMER_BACKSTOP_US 200
static uint64_t backstop_tsc;

/* Programs the core's hardware timer (0 cancels) and records what it stands for. */
static void program_timer(struct nom_cpu *c, uint64_t deadline)
{
    c->timer_armed = deadline;
    c->timer_stale = 0;
    nom_sys_timer_set(deadline);
}

/* Keeps one NOM_SYS_TIMER_SET armed at the earliest of: the next timer's backstop, and the end
 * of the running thread's slice if others wait. A deadline already armed earlier is left alone
 * (its upcall just re-arms), so most scheduling points make no system call. One armed for a
 * timer that has run at a scheduling point since (timer_stale) is moved, or cancelled, once it
 * is within half a backstop of firing for nothing: a sleeper that sleeps again before then
 * (the maintainer) moves it with its own timer instead, one timer programming per sleep and
 * no interrupt. */
static void sched_arm_timer(struct nom_cpu *c)
{
    uint64_t want = 0;
    if (!backstop_tsc)
        backstop_tsc = nom_us_to_tsc(TIMER_BACKSTOP_US);
    if (slice_us && !runq_empty(&c->runq))
        want = c->slice_start + nom_us_to_tsc(slice_us);
    struct nom_timer *t = timerheap_min(&timers);
    if (t && (!want || t->deadline + backstop_tsc < want))
        want = t->deadline + backstop_tsc;
    if (want && (!c->timer_armed || want < c->timer_armed)) {
        program_timer(c, want);
    } else if (c->timer_stale && want != c->timer_armed) {
        uint64_t now = nom_tsc();
        if (c->timer_armed <= now) {
            c->timer_stale = 0; /* it fires now: its upcall re-arms */
        } else if (c->timer_armed - now < backstop_tsc / 2) {
            program_timer(c, want);
        }
    }
}

void nom_timer_add(struct nom_timer *t, uint64_t deadline_tsc, void (*fn)(void *), void *arg)
{
    preempt_off();
    timerheap_remove(&timers, t);
    t->deadline = deadline_tsc;
    t->fn = fn;
    t->arg = arg;
    if (timerheap_insert(&timers, t) != 0)
        nom_panic("timer heap cannot grow (out of memory)");
    if (timerheap_min(&timers) == t)
        sched_arm_timer(nom_cpu_self());
    preempt_on();
}

int nom_timer_cancel(struct nom_timer *t)
{
    preempt_off();
    int was = timerheap_remove(&timers, t);
    preempt_on();
    return was;
}

static void run_expired_timers(struct nom_cpu *c)
{
    uint64_t now = nom_tsc();
    struct nom_timer *t;
    int ran = 0;
    while ((t = timerheap_pop_expired(&timers, now)) != NULL) {
        t->fn(t->arg);
        ran = 1;
    }
    /* Ran before its backstop fired: that interrupt would find nothing (sched_arm_timer). */
    if (ran && c->timer_armed > now)
        c->timer_stale = 1;
}

/* ---- scheduling ---- */

void sched_make_runnable(struct nom_thread *t)
{
    if (t->state != T_BLOCKED)
        return;
    t->state = T_RUNNABLE;
    runq_push(&nom_cpu_self()->runq, &t->rq);
}

/* Callbacks run on behalf of nobody: the interrupted thread's errno must survive them, and
 * the locks they take are the core's callback identity's, not the interrupted thread's.
 * errno is looked up once (newlib's errno is a call, __errno, and libnom's __getreent another:
 * 20 instructions per save and restore, 2.4 times per NetPIPE message; issue 16); callbacks
 * do not change the current thread, so the address stays the interrupted thread's. */
static void sched_run_pending(struct nom_cpu *c)
{
    int *err = &errno;
    int saved_errno = *err;
    c->in_callback++;
    while (c->work_pending) {
        c->work_pending = 0;
        if (c->timer_fired) {
            c->timer_fired = 0;
            c->timer_armed = 0;
        }
        uint64_t irqs = __atomic_exchange_n(&c->irq_pending, 0, __ATOMIC_SEQ_CST);
        for (unsigned i = 0; irqs; i++, irqs >>= 1)
            if ((irqs & 1) && irq_routes[i].fn)
                irq_routes[i].fn(irq_routes[i].arg);
        uint64_t bits = __atomic_exchange_n(&c->notify_pending, 0, __ATOMIC_SEQ_CST);
        if (bits && notify_fn)
            notify_fn(bits, notify_arg);
    }
    run_expired_timers(c);
    c->in_callback--;
    *err = saved_errno;
}

static int timer_due(void)
{
    struct nom_timer *t = timerheap_min(&timers);
    return t && t->deadline <= nom_tsc();
}

/* Records what block handed over as the upcalls would have (nom_upcall_dispatch). */
static void take_wake_events(struct nom_cpu *c, const struct nom_wake_events *ev)
{
    for (uint32_t i = 0; i < ev->nirqs && i < NOM_WAKE_MAX_IRQS; i++)
        sched_upcall_irq(c, ev->irq_cookies[i]);
    if (ev->what & NOM_WAKE_NOTIFY)
        sched_upcall_notify(c, ev->notify_bits);
    if (ev->what & NOM_WAKE_DEADLINE)
        sched_upcall_timer(c);
}

/* A blocked core needs its next timer at the exact deadline (NOM_SYS_BLOCK's), a running one
 * only as a backstop (sched_arm_timer). The kernel arms the LAPIC timer for the earlier of the
 * two deadlines it holds, so a backstop left standing behind the block's deadline cost a timer
 * write at every block and another at every wake-up: VM exits under KVM, a third of nhttpd's
 * under "many" at W = 40, where the core blocks between waves of requests (issue 11,
 * results/profiles-2026-12-02-timer-writes). Arming the timer at the block's deadline first
 * makes the two agree: a write when that deadline moves, none per block. The exact deadline
 * stays armed after the wake-up (sched_arm_timer leaves an earlier one alone), so a core that
 * runs past it takes the interrupt, as every core did before the backstop. */
static void arm_for_block(struct nom_cpu *c, const struct nom_timer *t)
{
    if (t && (!c->timer_armed || t->deadline < c->timer_armed))
        program_timer(c, t->deadline);
}

/* Blocks the core, closing the race with upcalls: with delivery held (ctl.disabled), an
 * interrupt arriving after the last check makes NOM_SYS_BLOCK return at once (abi.h). Block
 * hands the events that woke the core over in c->wake_events instead of as upcalls: the core
 * is at a scheduling point already, and an upcall per wake-up cost a yield, an upcall frame and
 * an upcall_return (tools/bench/insn_profile.py --app netpipe --conns 1: the kernel's share of
 * a NetPIPE message). */
static void block_core(struct nom_cpu *c)
{
    struct nom_timer *t = timerheap_min(&timers);
    /* A page fault while upcalls are held cannot be delivered (the kernel ends the
     * application), so the stack this path and the system call use must be mapped first. */
    stack_ensure_mapped(&c->current->stack, (uintptr_t)__builtin_frame_address(0) - 1024);
    arm_for_block(c, t);
    c->ctl.disabled = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (!c->work_pending && !timer_due() && runq_empty(&c->runq)) {
        uint64_t t0 = nom_tsc();
        if (nom_sys_block_events(t ? t->deadline : 0, &c->wake_events) > 0)
            take_wake_events(c, &c->wake_events);
        c->blocked_tsc += nom_tsc() - t0;
    }
    c->ctl.disabled = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (c->ctl.pending)
        nom_sys_yield(); /* delivers what was held while we checked */
}

/* Nothing is runnable: poll the hooks for a while, then arm them, then block. Returns when
 * something may have become runnable. */
/* 1 if a hook did work, NOM_IDLE_POLL_AGAIN if none did and one asks to go on polling, 0. */
static int hooks_poll(struct nom_cpu *c)
{
    int did = 0, again = 0;
    c->in_callback++;
    for (struct nom_idle_hook *h = hooks; h; h = h->next) {
        int r = h->poll ? h->poll(h->arg) : 0;
        did |= r > 0;
        again |= r == NOM_IDLE_POLL_AGAIN;
    }
    c->in_callback--;
    return did ? 1 : again ? NOM_IDLE_POLL_AGAIN : 0;
}

static int hooks_arm(struct nom_cpu *c)
{
    int pending = 0;
    c->in_callback++;
    for (struct nom_idle_hook *h = hooks; h && !pending; h = h->next)
        pending = h->arm && h->arm(h->arg);
    c->in_callback--;
    return pending;
}

/* Marks for tools/vmcounters' instruction-counting plugin (insn_count.c, whose copy of these
 * bytes must match): `nopl DISP32(%rax,%rax,1)`, a no-op with a displacement no compiler emits.
 * A turn of idle polling that found nothing runs from a begin mark to an end mark and is
 * counted apart from work; a turn that found work has no end mark and counts as work. */
#define NOM_IDLE_BEGIN_MARK() __asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'i'")
#define NOM_IDLE_END_MARK() __asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 'N', 'O', 'M', 'w'")

/* A turn whose hooks asked to go on polling (a W hold) is idle polling too, not work: it ends
 * with the end mark, and the budget starts over after it. A turn's end mark is followed at once
 * by the next turn's begin mark, so the loop's own instructions between two turns (the pause,
 * the count, the jump back) are idle polling as well: with them outside the marks, a few
 * instructions per turn counted as work, and "work" per request rose with the idle turns a
 * faster host fits between requests (issue 16; results/per-request-2026-12-01-driver-and-poll). */
static void sched_idle(struct nom_cpu *c)
{
    uint64_t start = nom_tsc();
    uint64_t poll_for = UINT64_MAX;
    if (idle_poll_us != UINT64_MAX) {
        if (idle_poll_tsc == 0)
            idle_poll_tsc = nom_us_to_tsc(idle_poll_us); /* once, not at every idle entry */
        poll_for = idle_poll_tsc;
    }
    if (hooks) {
        NOM_IDLE_BEGIN_MARK();
        for (uint64_t turn = 1;; turn++) {
            int r = hooks_poll(c);
            if (r > 0 || c->work_pending || timer_due() || !runq_empty(&c->runq))
                return; /* a turn that found work: no end mark, it counts as work */
            if (r == NOM_IDLE_POLL_AGAIN) {
                start = nom_tsc();
                turn = 0;
            }
            if (turn >= idle_poll_turns || nom_tsc() - start >= poll_for) {
                NOM_IDLE_END_MARK();
                break;
            }
            __builtin_ia32_pause();
            NOM_IDLE_END_MARK();
            NOM_IDLE_BEGIN_MARK();
        }
    }
    if (!hooks_arm(c))
        block_core(c);
}

void sched_schedule(void)
{
    struct nom_cpu *c = nom_cpu_self();
    struct nom_thread *cur = c->current, *next;
    struct nom_runq_link *l;
    for (;;) {
        /* Most passes find nothing recorded and no timer due: then the runner (an errno save,
         * the callback identity, the loop) is not entered at all (issue 16). */
        if (c->work_pending || timer_due())
            sched_run_pending(c);
        if ((l = runq_pop(&c->runq)) != NULL)
            break;
        sched_idle(c);
    }
    next = thread_of_link(l);
    next->state = T_RUNNING;
    c->slice_start = nom_tsc();
    if (next != cur) {
        cur->preempt_saved = c->preempt_count;
        c->current = next;
        c->preempt_count = next->preempt_saved;
        if (next->tp != cur->tp)
            tls_activate(next->tp);
        nom_switch(cur, next);
    }
    sched_arm_timer(c);
}

void nom_preempt_disable(void) { preempt_off(); }
void nom_preempt_enable(void) { preempt_on(); }

/* preempt_on() reached zero with work pending (run it), or went below zero (a bug). */
void preempt_on_slow(struct nom_cpu *c)
{
    if (c->preempt_count == 0 && c->work_pending)
        nom_sched_preempt_point();
    else if (c->preempt_count < 0)
        nom_panic("nom_preempt_enable without nom_preempt_disable");
}

/* A scheduling point in a running thread: run recorded work, and give the core away if the
 * slice is over and someone waits. Loops because new work can arrive while it runs. */
void nom_sched_preempt_point(void)
{
    struct nom_cpu *c = nom_cpu_self();
    do {
        c->preempt_count++;
        sched_run_pending(c);
        if (slice_us && !runq_empty(&c->runq) &&
            nom_tsc() - c->slice_start >= nom_us_to_tsc(slice_us)) {
            c->current->state = T_RUNNABLE;
            runq_push(&c->runq, &c->current->rq);
            sched_schedule();
        } else {
            sched_arm_timer(c);
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        c->preempt_count--;
    } while (c->work_pending && c->preempt_count == 0);
}

uint64_t nom_soft_deadline;

void nom_soft_deadline_set(uint64_t tsc)
{
    nom_soft_deadline = tsc;
}

/* A mutex release found the soft deadline past: poll the hooks now, unless the caller is in
 * a section that must not be interleaved (the stack itself releasing a lock) or a callback. */
void sched_soft_timer_run(void)
{
    struct nom_cpu *c = nom_cpu_self();
    if (c->preempt_count || c->in_callback)
        return;
    preempt_off();
    nom_soft_deadline = 0; /* the poll sets it again if something is still held */
    hooks_poll(c);
    preempt_on();
}

/* A yield is a soft-timer trigger point, as a socket call is (netloop_commit). A long
 * computation that yields now and then (memcached's LRU maintainer, apps/memcached/patches) is
 * the only thread running while it runs, so no one polls the device: a batch held for W waited
 * until it finished, up to 100K instructions later (issue 11 item 4; in 59 % of the receive
 * batches released 5 us or more beyond W = 40 us). Polling the hooks here releases a due batch
 * and wakes the threads waiting for frames, and the yield then lets them run. A thread that
 * yields with nothing due pays one empty poll (the driver's fast path). */
void nom_yield(void)
{
    struct nom_cpu *c = nom_cpu_self();
    preempt_off();
    hooks_poll(c);
    c->current->state = T_RUNNABLE;
    runq_push(&c->runq, &c->current->rq);
    sched_schedule();
    preempt_on();
}

int sched_yield(void)
{
    nom_yield();
    return 0;
}

/* ---- wait queues ---- */

static void waitq_remove(struct nom_waitq *wq, struct nom_waiter *w)
{
    struct nom_waiter **pp = &wq->head, *prev = NULL;
    while (*pp && *pp != w) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (!*pp)
        return;
    *pp = w->next;
    if (wq->tail == w)
        wq->tail = prev;
}

/* A wait's deadline timer is left armed when the wait ends first (an event woke it, the
 * common case: nhttpd's and libevent's epoll_wait give a timeout every time) and kept for the
 * thread's next timed wait if it is due no later: arming and cancelling it for every wait cost
 * ~130 instructions per request (a heap insert and remove, issue 16). So the timer may fire
 * for a wait that has ended (nothing to do) or before the deadline of the wait now standing
 * (armed again for that one): at most one early firing per deadline. */
static void waiter_timeout(void *arg)
{
    struct nom_thread *t = arg;
    struct nom_waiter *w = t->timed_wait;
    if (w == NULL || w->woken)
        return;
    if (nom_tsc() < w->deadline) {
        nom_timer_add(&t->sleep_timer, w->deadline, waiter_timeout, t);
        return;
    }
    waitq_remove(w->wq, w);
    sched_make_runnable(t);
}

int sched_wait_ready(struct nom_waitq *wq, uint64_t deadline_tsc, int (*ready)(void *),
                     void *arg)
{
    struct nom_cpu *c = nom_cpu_self();
    struct nom_thread *cur = c->current;
    if (c->in_callback)
        nom_panic("a callback in scheduler context tried to block (nom/sched.h)");
    preempt_off();
    if (deadline_tsc && deadline_tsc <= nom_tsc()) {
        preempt_on();
        return -ETIMEDOUT;
    }
    struct nom_waiter w = { NULL, cur, wq, 0, ready, arg, deadline_tsc };
    if (wq->tail)
        wq->tail->next = &w;
    else
        wq->head = &w;
    wq->tail = &w;
    if (deadline_tsc) {
        cur->timed_wait = &w;
        if (!cur->sleep_timer.heap_slot || cur->sleep_timer.deadline > deadline_tsc)
            nom_timer_add(&cur->sleep_timer, deadline_tsc, waiter_timeout, cur);
    }
    cur->state = T_BLOCKED;
    sched_schedule();
    cur->timed_wait = NULL;
    preempt_on();
    return w.woken ? 0 : -ETIMEDOUT;
}

int nom_waitq_wait(struct nom_waitq *wq, uint64_t deadline_tsc)
{
    return sched_wait_ready(wq, deadline_tsc, NULL, NULL);
}

static void waiter_wake(struct nom_waiter *w)
{
    w->woken = 1;
    sched_make_runnable(w->thread);
}

/* Evaluating readiness here, in the waker, saves a context switch per waiter that would only
 * find nothing to do (every poll()ing thread on every descriptor event otherwise). */
void sched_wake_ready(struct nom_waitq *wq)
{
    preempt_off();
    struct nom_waiter **pp = &wq->head, *prev = NULL;
    while (*pp) {
        struct nom_waiter *w = *pp;
        if (w->ready && !w->ready(w->ready_arg)) {
            prev = w;
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        if (wq->tail == w)
            wq->tail = prev;
        waiter_wake(w);
    }
    preempt_on();
}

int nom_waitq_wake_one(struct nom_waitq *wq)
{
    preempt_off();
    struct nom_waiter *w = wq->head;
    if (w) {
        wq->head = w->next;
        if (!wq->head)
            wq->tail = NULL;
        waiter_wake(w);
    }
    preempt_on();
    return w != NULL;
}

void nom_waitq_wake_all(struct nom_waitq *wq)
{
    preempt_off();
    while (nom_waitq_wake_one(wq))
        ;
    preempt_on();
}

void nom_sleep_until(uint64_t deadline_tsc)
{
    struct nom_waitq q = NOM_WAITQ_INIT;
    while (nom_waitq_wait(&q, deadline_tsc) == 0)
        ;
}

/* A new thread's first code (thread.c): it arrives from nom_switch inside sched_schedule of
 * another thread, with the preempt count 1 it was created with. */
void sched_thread_start(void)
{
    sched_arm_timer(nom_cpu_self());
    preempt_on();
}
