/* upcall.c: the upcall handler (abi.h "Upcalls"). It runs on its own stack with further upcalls
 * held, so it does as little as it can: page faults are resolved here (fault.c); interrupts,
 * notifications and timer expiries are only recorded for the scheduler, which runs their
 * callbacks in thread context; and when the interrupted thread is preemptible the handler
 * diverts it into nom_preempt_trampoline (switch.S) so that the recorded work runs now. */
#include <nom/syscall.h>
#include "libnom.h"

#define UPCALL_STACK_SIZE (64 * 1024)
#define RED_ZONE 128

static unsigned char upcall_stack[UPCALL_STACK_SIZE] __attribute__((aligned(16)));

void upcall_init(void)
{
    struct nom_cpu *c = nom_cpu_self();
    int64_t r = nom_sys_upcall_register((uint64_t)nom_upcall_entry,
                                        (uint64_t)(upcall_stack + UPCALL_STACK_SIZE), &c->ctl);
    if (r < 0)
        nom_panic("upcall_register failed");
}

/* Makes the interrupted thread call nom_preempt_trampoline as if from its current rip, below
 * its red zone (SysV ABI: the 128 bytes under rsp belong to the interrupted function). */
static void divert_to_scheduler(struct nom_cpu *c, struct nom_upcall_frame *f)
{
    struct nom_thread *t = c->current;
    uintptr_t sp = f->regs.rsp - RED_ZONE - 8;
    if (!t || c->preempt_count != 0 || stack_ensure_mapped(&t->stack, sp) != 0)
        return; /* the work stays recorded; the next scheduling point runs it */
    *(uint64_t *)sp = f->regs.rip;
    f->regs.rsp = sp;
    f->regs.rip = (uint64_t)nom_preempt_trampoline;
}

void nom_upcall_dispatch(struct nom_upcall_frame *f)
{
    struct nom_cpu *c = nom_cpu_self();
    switch (f->type) {
    case NOM_UPCALL_PAGE_FAULT:
        fault_handle(f);
        return;
    case NOM_UPCALL_IRQ:
        sched_upcall_irq(c, f->arg0);
        break;
    case NOM_UPCALL_NOTIFY:
        sched_upcall_notify(c, f->arg0);
        break;
    case NOM_UPCALL_TIMER:
        sched_upcall_timer(c);
        break;
    default:
        return;
    }
    divert_to_scheduler(c, f);
}
