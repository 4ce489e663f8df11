/* sched.c: the kernel's share of scheduling (paper 3.3). Applications schedule their own user
 * threads on the contexts (cores) they hold; the kernel only time-slices contexts when a vCPU
 * has more than one runnable, and takes a blocked context off the CPU entirely. Contexts stay on
 * the vCPU they were placed on. Tickless: the LAPIC timer is armed only for the next deadline
 * (a time-slice end, a block deadline, an application timer). */
#include "defs.h"
#include "cpu.h"
#include "app.h"

#define MAX_CTXS 128
#define SLICE_MS 10

static struct ctx ctx_pool[MAX_CTXS];
static bool ctx_used[MAX_CTXS];
/* Slots at or above this were never used: the per-tick and per-block scans stop here (a
 * scan of all 128 slots was 6 % of a NetPIPE message's instructions). */
static int ctx_high;
static struct ctx *zombie[MAX_CPUS]; /* dead context to reap once its CPU left its stack */

extern void switch_stack(uint64_t *save_ksp, uint64_t next_ksp);
extern char ctx_first_entry[];

static void runq_push(struct cpu *cpu, struct ctx *c) {
    c->run_next = NULL;
    if (cpu->run_tail)
        cpu->run_tail->run_next = c;
    else
        cpu->run_head = c;
    cpu->run_tail = c;
}

static struct ctx *runq_pop(struct cpu *cpu) {
    struct ctx *c = cpu->run_head;
    if (c) {
        cpu->run_head = c->run_next;
        if (!cpu->run_head)
            cpu->run_tail = NULL;
    }
    return c;
}

void sched_remove(struct ctx *c) {
    struct cpu *cpu = &cpus[c->cpu];
    struct ctx *prev = NULL;
    for (struct ctx *p = cpu->run_head; p; prev = p, p = p->run_next) {
        if (p != c)
            continue;
        if (prev)
            prev->run_next = p->run_next;
        else
            cpu->run_head = p->run_next;
        if (cpu->run_tail == p)
            cpu->run_tail = prev;
        return;
    }
}

void sched_init_cpu(struct cpu *c) {
    c->current = NULL;
    c->in_kernel = true;
    c->idle_since = rdtsc();
}

static void ipi(int cpu) {
    if (cpu != (int)this_cpu()->index)
        lapic_send_ipi(cpus[cpu].apic_id, VEC_RESCHED);
}

/* Makes another CPU look at its state again (a context died, got an upcall, became runnable). */
void sched_kick_cpu(int cpu) {
    cpus[cpu].need_resched = true;
    ipi(cpu);
}

void sched_add(struct ctx *c) {
    struct cpu *cpu = &cpus[c->cpu];
    c->state = CTX_RUNNABLE;
    runq_push(cpu, c);
    if (cpu->current && !cpu->slice_end)
        cpu->slice_end = rdtsc() + tsc_hz() / 1000 * SLICE_MS;
    if (cpu == this_cpu())
        sched_reprogram_timer();
    else
        ipi(c->cpu); /* wakes it from hlt, or lets it arm its slice timer */
}

/* why: NOM_WAKE_* bits. A blocked context becomes runnable; a running one on another CPU is
 * interrupted so it takes its pending upcall now rather than at its next kernel entry. */
void sched_wake(struct ctx *c, uint32_t why) {
    if (c->state == CTX_BLOCKED) {
        c->wake_bits |= why;
        sched_add(c);
    } else if (c->state == CTX_RUNNING && c->cpu != (int)this_cpu()->index) {
        ipi(c->cpu);
    }
}

static uint64_t earliest(uint64_t a, uint64_t b) {
    return !a ? b : !b ? a : a < b ? a : b;
}

/* Arms the LAPIC timer for the CPU's earliest deadline. An unchanged deadline the timer is
 * already armed for is left alone: under KVM each write of the timer is a VM exit, and a
 * context that blocks and wakes per message would otherwise rewrite it every time. */
void sched_reprogram_timer(void) {
    struct cpu *cpu = this_cpu();
    uint64_t next = cpu->run_head ? cpu->slice_end : 0;
    for (int i = 0; i < ctx_high; i++) {
        struct ctx *c = &ctx_pool[i];
        if (!ctx_used[i] || c->cpu != (int)cpu->index || c->state == CTX_DEAD)
            continue;
        next = earliest(next, c->timer_deadline);
        if (c->state == CTX_BLOCKED)
            next = earliest(next, c->block_deadline);
    }
    if (next == cpu->timer_armed)
        return;
    cpu->timer_armed = next;
    lapic_timer_deadline(next);
}

void sched_timer_tick(void) {
    struct cpu *cpu = this_cpu();
    uint64_t now = rdtsc();
    cpu->timer_armed = 0; /* it fired (maybe early, by rounding): re-arm whatever is left */
    for (int i = 0; i < ctx_high; i++) {
        struct ctx *c = &ctx_pool[i];
        if (!ctx_used[i] || c->cpu != (int)cpu->index || c->state == CTX_DEAD)
            continue;
        if (c->timer_deadline && now >= c->timer_deadline) {
            c->timer_fired = c->timer_deadline;
            c->timer_deadline = 0;
            c->timer_pending = true;
            sched_wake(c, NOM_WAKE_DEADLINE);
        }
        if (c->state == CTX_BLOCKED && c->block_deadline && now >= c->block_deadline)
            sched_wake(c, NOM_WAKE_DEADLINE);
    }
    if (cpu->slice_end && now >= cpu->slice_end) {
        cpu->slice_end = 0;
        if (cpu->run_head && cpu->current)
            cpu->need_resched = true;
    }
    sched_reprogram_timer();
}

static void reap_zombie(struct cpu *cpu) {
    struct ctx *z = zombie[cpu->index];
    if (z) {
        zombie[cpu->index] = NULL;
        app_reap_context(z);
    }
}

/* Saves prev (NULL: the idle loop), loads next (NULL: the idle loop) and switches stacks. */
static void switch_to(struct cpu *cpu, struct ctx *prev, struct ctx *next) {
    uint64_t now = rdtsc();
    if (prev) {
        prev->app->cpu_tsc += now - prev->run_since;
        app_publish_cpu_time(prev->app);
        fpu_save(prev->fpu);
        prev->fs_base = rdmsr(0xc0000100);
        prev->gs_base = rdmsr(0xc0000102);
    } else {
        cpu->idle_tsc += now - cpu->idle_since;
    }
    cpu->current = next;
    if (next) {
        next->state = CTX_RUNNING;
        next->run_since = now;
        cpu->kstack_top = next->kstack + KSTACK_SIZE;
        cpu->tss.rsp0 = cpu->kstack_top;
        vm_switch(next->app->pml4); /* no CR3 write if the idle loop kept it (below) */
        cpu_set_io_bitmap(cpu, next->app->io_bitmap);
        fpu_restore(next->fpu);
        wrmsr(0xc0000100, next->fs_base);
        wrmsr(0xc0000102, next->gs_base);
    } else {
        /* The idle loop runs on prev's address space (every one maps the kernel), so that a
         * context that blocks and wakes on an idle core costs no CR3 write either way: a CR3
         * write flushes the TLB (no PCIDs here), and under TCG it flushes QEMU's soft TLB, a
         * memset of up to 2^22 entries that stopped the vCPU for 4-75 ms at a time (nhttpd
         * "many", kernel/README.md "Lazy idle address space"). sched_forget_app drops it
         * before the space is freed; sched_sync_app's TLB shootdowns reach it (idle_on). */
        cpu->idle_since = now;
    }
    cpu->slice_end = next && cpu->run_head ? now + tsc_hz() / 1000 * SLICE_MS : 0;
    sched_reprogram_timer();
    switch_stack(prev ? &prev->ksp : &cpu->idle_ksp, next ? next->ksp : cpu->idle_ksp);
    reap_zombie(this_cpu());
}

/* Called with the kernel lock held, from a context (in the kernel) or from the idle loop. The
 * current context keeps the CPU if it is still running and nobody else is waiting. */
void schedule(void) {
    struct cpu *cpu = this_cpu();
    struct ctx *prev = cpu->current;
    if (prev && prev->state == CTX_RUNNING) {
        if (!cpu->run_head)
            return;
        prev->state = CTX_RUNNABLE;
        runq_push(cpu, prev);
    }
    struct ctx *next = runq_pop(cpu);
    if (prev && prev->state == CTX_DEAD)
        zombie[cpu->index] = prev;
    if (next == prev && next) {
        next->state = CTX_RUNNING;
        return;
    }
    if (!prev && !next)
        return;
    switch_to(cpu, prev, next);
}

_Noreturn void sched_idle_loop(void) {
    struct cpu *cpu = this_cpu();
    for (;;) {
        if (cpu->run_head) {
            schedule();
            continue;
        }
        klock_release();
        __asm__ volatile("sti; hlt; cli");
        klock_acquire();
    }
}

/* The C half of a new context's first run (entry.S ctx_first_entry). */
void ctx_first_run(void) {
    reap_zombie(this_cpu());
    trap_exit_to_user(this_cpu()->current->tf);
}

struct ctx *ctx_create(struct app *a, int cpu, uint64_t entry, uint64_t stack_top, uint64_t arg) {
    int i = 0;
    while (i < MAX_CTXS && ctx_used[i])
        i++;
    if (i == MAX_CTXS)
        return NULL;
    uint64_t kstack = frame_alloc_contig(KSTACK_SIZE / PAGE_SIZE);
    uint64_t fpu = frame_alloc();
    if (!kstack || !fpu) {
        if (kstack) frame_free_contig(kstack, KSTACK_SIZE / PAGE_SIZE);
        if (fpu) frame_free(fpu);
        return NULL;
    }
    struct ctx *c = &ctx_pool[i];
    memset(c, 0, sizeof *c);
    ctx_used[i] = true;
    if (i >= ctx_high)
        ctx_high = i + 1;
    c->app = a;
    c->cpu = cpu;
    c->state = CTX_RUNNABLE;
    c->kstack = (uint64_t)P2V(kstack);
    c->fpu = P2V(fpu);
    memcpy(c->fpu, fpu_initial_state, fpu_area_size);
    c->tf = (struct trapframe *)(c->kstack + KSTACK_SIZE) - 1;
    memset(c->tf, 0, sizeof *c->tf);
    c->tf->rip = entry;
    c->tf->cs = 0x23;
    c->tf->rflags = 0x202;
    c->tf->rsp = stack_top;
    c->tf->ss = 0x1b;
    c->tf->rdi = arg;
    uint64_t *sp = (uint64_t *)c->tf;
    *--sp = (uint64_t)ctx_first_entry; /* switch_stack returns here */
    for (int r = 0; r < 6; r++)
        *--sp = 0;                      /* rbp rbx r12-r15 */
    c->ksp = (uint64_t)sp;
    c->app_next = a->ctxs;
    a->ctxs = c;
    a->live_ctxs++;
    return c;
}

void ctx_free(struct ctx *c) {
    frame_free_contig(V2P(c->kstack), KSTACK_SIZE / PAGE_SIZE);
    frame_free(V2P(c->fpu));
    ctx_used[c - ctx_pool] = false;
}

/* What a CPU caches of its application's rights: TLB entries (a full CR3 reload drops them;
 * user pages are never global) and its TSS copy of the I/O bitmap. Runs in the SYNC IPI's
 * handler without the kernel lock (the CPU that asked holds it and waits), and on the way back
 * to ring 3 for a request that arrived while this CPU was in the kernel. */
void sched_sync_apply(struct cpu *cpu) {
    uint32_t what = __atomic_exchange_n(&cpu->sync_pending, 0, __ATOMIC_ACQ_REL);
    if (what & SYNC_TLB) {
        uint64_t cr3;
        __asm__ volatile("movq %%cr3, %0; movq %0, %%cr3" : "=r"(cr3)::"memory");
    }
    if (what & SYNC_IOMAP) {
        cpu->io_bitmap_loaded = NULL;
        cpu_set_io_bitmap(cpu, cpu->current ? cpu->current->app->io_bitmap : NULL);
    }
    if ((what & SYNC_DROP_AS) && !cpu->current)
        vm_switch(vm_kernel_pml4());
}

/* c runs no context and still has a's page tables loaded (switch_to keeps them for idle). */
static bool idle_on(const struct cpu *c, const struct app *a) {
    return !__atomic_load_n(&c->current, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&c->pml4_loaded, __ATOMIC_ACQUIRE) == a->pml4;
}

/* A CPU waiting for the kernel lock has interrupts off, so a SYNC IPI waits too: it applies
 * what is pending here instead, or a holder waiting for it (sched_forget_app) never returns. */
void sched_sync_poll(void) {
    struct cpu *cpu = this_cpu();
    if (__atomic_load_n(&cpu->sync_pending, __ATOMIC_ACQUIRE))
        sched_sync_apply(cpu);
}

/* a's address space is about to be freed: no CPU's idle loop may keep it loaded (switch_to).
 * Called with the kernel lock held; an idle CPU applies SYNC_DROP_AS in its IPI handler (it
 * halts with interrupts on) or while it waits for the lock (sched_sync_poll). */
void sched_forget_app(struct app *a) {
    struct cpu *me = this_cpu();
    bool asked[MAX_CPUS] = {false};
    for (int i = 0; i < ncpus; i++) {
        struct cpu *c = &cpus[i];
        if (!idle_on(c, a))
            continue;
        __atomic_or_fetch(&c->sync_pending, SYNC_DROP_AS, __ATOMIC_ACQ_REL);
        if (c == me) {
            sched_sync_apply(me);
        } else {
            lapic_send_ipi(c->apic_id, VEC_SYNC);
            asked[i] = true;
        }
    }
    for (int i = 0; i < ncpus; i++)
        while (asked[i] && __atomic_load_n(&cpus[i].pml4_loaded, __ATOMIC_ACQUIRE) == a->pml4)
            __asm__ volatile("pause");
}

/* Every kernel entry from ring 3, before it waits for the kernel lock. */
void sched_enter_kernel(void) {
    __atomic_store_n(&this_cpu()->in_kernel, true, __ATOMIC_SEQ_CST);
}

/* After the kernel unmapped pages of a or revoked its ports: no vCPU may go on using them. This
 * CPU reloads its I/O bitmap at once (its TLB entries the caller already flushed page by page,
 * vm_flush_page); every other vCPU running a context of a gets a SYNC IPI, and the
 * caller (holding the kernel lock, so nothing it freed can be handed out meanwhile) waits until
 * that vCPU has applied it, or has entered the kernel, where it applies it before going back to
 * ring 3 (it may be waiting for this very lock with interrupts off). Intel SDM 4.10.5. */
void sched_sync_app(struct app *a, uint32_t what) {
    struct cpu *me = this_cpu();
    if (me->current && me->current->app == a && (what & SYNC_IOMAP)) {
        __atomic_or_fetch(&me->sync_pending, SYNC_IOMAP, __ATOMIC_ACQ_REL);
        sched_sync_apply(me);
    }
    bool asked[MAX_CPUS] = {false};
    for (int i = 0; i < ncpus; i++) {
        struct cpu *c = &cpus[i];
        if (c == me)
            continue;
        if (idle_on(c, a)) {
            /* Idle on a's address space: its TLB may hold a's entries. It applies this before
             * a runs there again (trap_exit_to_user); no need to wake it. */
            __atomic_or_fetch(&c->sync_pending, what, __ATOMIC_ACQ_REL);
            continue;
        }
        if (!c->current || c->current->app != a)
            continue;
        __atomic_or_fetch(&c->sync_pending, what, __ATOMIC_ACQ_REL);
        lapic_send_ipi(c->apic_id, VEC_SYNC);
        asked[i] = true;
    }
    for (int i = 0; i < ncpus; i++)
        while (asked[i] && __atomic_load_n(&cpus[i].sync_pending, __ATOMIC_ACQUIRE) &&
               !__atomic_load_n(&cpus[i].in_kernel, __ATOMIC_ACQUIRE))
            __asm__ volatile("pause");
}

/* need_free: a vCPU with no context at all (core_acquire); else the least loaded one. */
int sched_pick_cpu(bool need_free) {
    int load[MAX_CPUS] = {0};
    for (int i = 0; i < MAX_CTXS; i++)
        if (ctx_used[i] && ctx_pool[i].state != CTX_DEAD)
            load[ctx_pool[i].cpu]++;
    int best = -1;
    for (int i = 0; i < ncpus; i++)
        if (cpus[i].online && (best < 0 || load[i] < load[best]))
            best = i;
    return need_free && best >= 0 && load[best] > 0 ? -1 : best;
}
