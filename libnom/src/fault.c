/* fault.c: page faults are the application's (paper 3.4). Stack reservations grow on demand
 * (a thread's, above its guard page; the main thread's, down from NOM_STACK_TOP); any other
 * fault is reported on one console line and ends the application or, if asked, the thread.
 * Runs in upcall context: no stdio, no malloc, no locks. */
#include <nom/fault.h>
#include <nom/syscall.h>
#include "libnom.h"

#define PF_PRESENT 0x1 /* x86 page-fault error code bits (Intel SDM vol. 3, 4.7) */
#define PF_WRITE 0x2
#define PF_FETCH 0x10

static enum nom_fault_policy policy = NOM_FAULT_EXIT;
static volatile unsigned long faults;

void nom_fault_policy_set(enum nom_fault_policy p) { policy = p; }
unsigned long nom_fault_count(void) { return faults; }

int stack_ensure_mapped(struct stack_region *s, uintptr_t addr)
{
    if (addr >= s->mapped_low && addr < s->top)
        return 0;
    if (addr < s->base + s->guard || addr >= s->top)
        return -1;
    uintptr_t lo = (addr & ~(NOM_PAGE_SIZE - 1)) - (NOM_STACK_GROW_PAGES - 1) * NOM_PAGE_SIZE;
    if (lo < s->base + s->guard || lo > addr)
        lo = s->base + s->guard;
    if (nom_sys_mem_map(lo, (s->mapped_low - lo) / NOM_PAGE_SIZE,
                        NOM_MAP_READ | NOM_MAP_WRITE) < 0)
        return -1;
    s->mapped_low = lo;
    return 0;
}

static const char *fault_cause(uintptr_t addr, uint64_t err, struct nom_thread **guard_of)
{
    struct nom_thread *t = thread_by_stack_addr(addr);
    *guard_of = NULL;
    if (addr < NOM_USER_MIN)
        return "null or low pointer (nothing is mapped below 0x400000)";
    if (t && addr < t->stack.base + t->stack.guard) {
        *guard_of = t;
        return "stack overflow into the guard page of thread ";
    }
    if (err & PF_PRESENT)
        return "access not permitted by the page's protection";
    return "address not mapped";
}

static void report(struct nom_upcall_frame *f, struct nom_thread *cur)
{
    char a[24], b[24], n[24];
    struct nom_thread *guard_of;
    uint64_t err = f->arg1;
    const char *cause = fault_cause(f->arg0, err, &guard_of);
    nom_console_puts("nom: fault: ");
    nom_console_puts(err & PF_FETCH ? "exec" : err & PF_WRITE ? "write" : "read");
    nom_console_puts(" at ");
    nom_console_puts(nom_fmt_hex(a, f->arg0));
    nom_console_puts(" rip ");
    nom_console_puts(nom_fmt_hex(b, f->regs.rip));
    nom_console_puts(" thread ");
    nom_console_puts(nom_fmt_dec(n, cur ? cur->id : 0));
    nom_console_puts(" (");
    nom_console_puts(cur && cur->name[0] ? cur->name : "?");
    nom_console_puts("): ");
    nom_console_puts(cause);
    if (guard_of)
        nom_console_puts(nom_fmt_dec(n, guard_of->id));
    nom_console_puts("\n");
}

static __attribute__((noreturn)) void fault_end_thread(void)
{
    thread_exit_now(NOM_THREAD_FAULTED);
}

void fault_handle(struct nom_upcall_frame *f)
{
    struct nom_thread *cur = nom_cpu_self()->current;
    uintptr_t addr = f->arg0;
    if (!(f->arg1 & PF_PRESENT)) {
        if (cur && stack_ensure_mapped(&cur->stack, addr) == 0)
            return;
        struct nom_thread *t = thread_by_stack_addr(addr);
        if (t && t != cur && stack_ensure_mapped(&t->stack, addr) == 0)
            return;
    }
    faults++;
    report(f, cur);
    if (policy != NOM_FAULT_END_THREAD || !cur || cur->main)
        nom_sys_exit(139);
    /* The thread's own stack may be what is broken: restart it at the top of its stack, in a
     * function that ends it (16-byte aligned as after a call). */
    f->regs.rsp = ((cur->stack.top - 256) & ~15ul) - 8;
    f->regs.rip = (uint64_t)fault_end_thread;
    nom_cpu_self()->preempt_count = 0;
}
