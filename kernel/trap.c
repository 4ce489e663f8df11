/* trap.c: exceptions and interrupts. A fault in ring 3 becomes an upcall (page faults, when the
 * application registered a handler) or ends that application only; a fault in ring 0 is a bug
 * and panics with a register dump. Device vectors are handed to device.c. */
#include "defs.h"
#include "cpu.h"
#include "app.h"

static const char *exception_names[32] = {
    "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range", "invalid opcode",
    "device not available", "double fault", "coprocessor overrun", "invalid TSS",
    "segment not present", "stack fault", "general protection", "page fault", "reserved",
    "x87 floating point", "alignment check", "machine check", "SIMD floating point",
    "virtualization", "control protection",
};

static uint8_t vector_used[256];

void trap_init(void) {
    for (int v = 0; v < VEC_IRQ_FIRST; v++)
        vector_used[v] = 1;
    for (int v = VEC_IRQ_LAST + 1; v < 256; v++)
        vector_used[v] = 1;
}

int irq_alloc_vector(void) {
    for (int v = VEC_IRQ_FIRST; v <= VEC_IRQ_LAST; v++) {
        if (!vector_used[v]) {
            vector_used[v] = 1;
            return v;
        }
    }
    return -NOM_ENOMEM;
}

void irq_free_vector(int v) {
    if (v >= VEC_IRQ_FIRST && v <= VEC_IRQ_LAST)
        vector_used[v] = 0;
}

static uint64_t read_cr2(void) {
    uint64_t v;
    __asm__ volatile("movq %%cr2, %0" : "=r"(v));
    return v;
}

void dump_trapframe(const struct trapframe *tf) {
    kprintf("  rip %016lx cs %lx rflags %016lx rsp %016lx ss %lx\n", tf->rip, tf->cs, tf->rflags,
            tf->rsp, tf->ss);
    kprintf("  rax %016lx rbx %016lx rcx %016lx rdx %016lx\n", tf->rax, tf->rbx, tf->rcx, tf->rdx);
    kprintf("  rsi %016lx rdi %016lx rbp %016lx r8  %016lx\n", tf->rsi, tf->rdi, tf->rbp, tf->r8);
    kprintf("  r9  %016lx r10 %016lx r11 %016lx r12 %016lx\n", tf->r9, tf->r10, tf->r11, tf->r12);
    kprintf("  r13 %016lx r14 %016lx r15 %016lx vec %lu err %lx cr2 %016lx\n", tf->r13, tf->r14,
            tf->r15, tf->vector, tf->error, read_cr2());
}

static const char *exception_name(uint64_t v) {
    return v < 32 && exception_names[v] ? exception_names[v] : "exception";
}

static void user_exception(struct ctx *c, struct trapframe *tf) {
    uint64_t cr2 = read_cr2();
    if (tf->vector == 14 && upcall_page_fault(c, tf, cr2, tf->error))
        return;
    kprintf("nom: app %s: %s at rip %lx (cpu %d)\n", c->app->name, exception_name(tf->vector),
            tf->rip, c->cpu);
    dump_trapframe(tf);
    if (tf->vector == 14)
        app_kill(c->app, "page fault at %lx (rip %lx, error %lx)", cr2, tf->rip, tf->error);
    else
        app_kill(c->app, "%s at rip %lx", exception_name(tf->vector), tf->rip);
}

static void handle_interrupt(uint64_t vector) {
    if (vector == VEC_TIMER) {
        lapic_eoi();
        sched_timer_tick();
    } else if (vector == VEC_RESCHED) {
        lapic_eoi(); /* the scheduler runs on the way out */
    } else if (vector == VEC_IOMMU) {
        lapic_eoi();
        iommu_fault_irq();
    } else if (vector == VEC_SPURIOUS) {
        /* no EOI for spurious interrupts (SDM 10.9) */
    } else if (vector >= VEC_IRQ_FIRST && vector <= VEC_IRQ_LAST) {
        lapic_eoi();
        device_irq((int)vector);
    } else {
        kprintf("nom: unexpected interrupt %lu\n", vector);
        lapic_eoi();
    }
}

/* Ring 3 code returns through here: run the scheduler if this context must give up the CPU,
 * deliver pending upcalls, drop the kernel lock. */
void trap_exit_to_user(struct trapframe *tf) {
    struct cpu *cpu = this_cpu();
    for (;;) {
        struct ctx *c = cpu->current;
        if (c && c->state == CTX_RUNNING && !cpu->need_resched)
            break;
        cpu->need_resched = false;
        schedule(); /* returns when this context runs again */
    }
    upcall_deliver_pending(cpu->current, tf);
    if (cpu->sync_pending)
        sched_sync_apply(cpu);
    __atomic_store_n(&cpu->in_kernel, false, __ATOMIC_SEQ_CST);
    klock_release();
}

void trap_dispatch(struct trapframe *tf) {
    bool from_user = (tf->cs & 3) == 3;
    if (smap_on) /* an interrupt gate keeps ring 3's AC flag, which would switch SMAP off */
        __asm__ volatile("clac" ::: "memory");
    if (tf->vector == VEC_SYNC) { /* no lock: the CPU that sent it holds it and waits */
        sched_sync_apply(this_cpu());
        lapic_eoi();
        return;
    }
    if (from_user)
        sched_enter_kernel();
    if (!from_user) {
        if (tf->vector < 32) {
            kprintf("nom: PANIC: %s in the kernel (cpu %lu)\n", exception_name(tf->vector),
                    this_cpu()->index);
            dump_trapframe(tf);
            panic("kernel exception %lu", tf->vector);
        }
        /* Only the idle loop runs with interrupts on; it schedules when the handler returns. */
        klock_acquire();
        handle_interrupt(tf->vector);
        klock_release();
        return;
    }
    klock_acquire();
    struct ctx *c = this_cpu()->current;
    if (tf->vector < 32)
        user_exception(c, tf);
    else
        handle_interrupt(tf->vector);
    trap_exit_to_user(tf);
}
