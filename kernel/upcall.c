/* upcall.c: how the kernel calls into an application (paper 3.4-3.5): page faults, device
 * interrupts, notifications and timers arrive on the context's registered upcall stack as a
 * struct nom_upcall_frame (abi.h). One upcall at a time: the kernel sets ctl->disabled on
 * delivery and holds further upcalls (ctl->pending) until upcall_return, yield or block. */
#include "defs.h"
#include "cpu.h"
#include "app.h"

#define USER_RFLAGS_MASK 0x40cd5ull /* CF PF AF ZF SF DF OF AC: what ring 3 may choose */

bool upcall_pending(const struct ctx *c) {
    return c->irq_pending || c->notify_pending || c->timer_pending;
}

static int read_ctl(struct ctx *c, struct nom_upcall_ctl *ctl) {
    return copy_from_user(c->app->pml4, ctl, c->upcall_ctl, sizeof *ctl);
}

static int write_ctl(struct ctx *c, uint32_t disabled, uint32_t pending) {
    struct nom_upcall_ctl ctl = {disabled, pending};
    return copy_to_user(c->app->pml4, c->upcall_ctl, &ctl, sizeof ctl);
}

/* Pushes the frame and redirects tf to the handler. Returns false if the application is gone
 * (its upcall stack or control word is not writable: it is killed). */
static bool push_frame(struct ctx *c, struct trapframe *tf, uint64_t type, uint64_t arg0, uint64_t arg1) {
    struct nom_upcall_frame f = {.type = type, .arg0 = arg0, .arg1 = arg1};
    f.regs = (struct nom_regs){tf->rax, tf->rbx, tf->rcx, tf->rdx, tf->rsi, tf->rdi, tf->rbp,
                               tf->r8, tf->r9, tf->r10, tf->r11, tf->r12, tf->r13, tf->r14,
                               tf->r15, tf->rip, tf->rsp, tf->rflags};
    uint64_t frame_va = (c->upcall_stack - sizeof f) & ~15ull, zero = 0;
    if (copy_to_user(c->app->pml4, frame_va, &f, sizeof f) < 0 ||
        copy_to_user(c->app->pml4, frame_va - 8, &zero, 8) < 0 || write_ctl(c, 1, 0) < 0) {
        app_kill(c->app, "upcall stack %lx is not writable", c->upcall_stack);
        return false;
    }
    tf->rip = c->upcall_entry;
    tf->rsp = frame_va - 8;
    tf->rdi = frame_va;
    tf->rflags = 0x202;
    tf->cs = SEL_UCODE;
    tf->ss = SEL_UDATA;
    return true;
}

/* On the way back to ring 3: delivers one pending upcall if the context takes upcalls now. */
void upcall_deliver_pending(struct ctx *c, struct trapframe *tf) {
    if (!c || !c->upcall_entry || !upcall_pending(c) || c->state != CTX_RUNNING)
        return;
    struct nom_upcall_ctl ctl;
    if (read_ctl(c, &ctl) < 0) {
        app_kill(c->app, "upcall control word %lx is not readable", c->upcall_ctl);
        return;
    }
    if (ctl.disabled) {
        if (!ctl.pending)
            write_ctl(c, ctl.disabled, 1);
        return;
    }
    if (c->timer_pending) {
        c->timer_pending = false;
        push_frame(c, tf, NOM_UPCALL_TIMER, c->timer_fired, 0);
    } else if (c->irq_pending) {
        int slot = __builtin_ctz(c->irq_pending);
        c->irq_pending &= ~(1u << slot);
        push_frame(c, tf, NOM_UPCALL_IRQ, c->irq_cookie[slot], 0);
    } else {
        uint64_t bits = c->notify_pending;
        c->notify_pending = 0;
        push_frame(c, tf, NOM_UPCALL_NOTIFY, bits, 0);
    }
}

/* A page fault in ring 3 goes to the application's handler if it can take one now. */
bool upcall_page_fault(struct ctx *c, struct trapframe *tf, uint64_t addr, uint64_t err) {
    struct nom_upcall_ctl ctl;
    if (!c->upcall_entry || read_ctl(c, &ctl) < 0 || ctl.disabled)
        return false;
    push_frame(c, tf, NOM_UPCALL_PAGE_FAULT, addr, err);
    return true;
}

static bool user_canonical(uint64_t va) {
    return va < 0x0000800000000000ull;
}

int upcall_return(struct ctx *c, struct trapframe *tf, uint64_t frame_va) {
    struct nom_upcall_frame f;
    if (!c->upcall_entry)
        return -NOM_EINVAL;
    if (copy_from_user(c->app->pml4, &f, frame_va, sizeof f) < 0)
        return -NOM_EFAULT;
    if (!user_canonical(f.regs.rip) || !user_canonical(f.regs.rsp))
        return -NOM_EINVAL;
    if (write_ctl(c, 0, 0) < 0)
        return -NOM_EFAULT;
    const struct nom_regs *r = &f.regs;
    tf->rax = r->rax, tf->rbx = r->rbx, tf->rcx = r->rcx, tf->rdx = r->rdx;
    tf->rsi = r->rsi, tf->rdi = r->rdi, tf->rbp = r->rbp, tf->r8 = r->r8, tf->r9 = r->r9;
    tf->r10 = r->r10, tf->r11 = r->r11, tf->r12 = r->r12, tf->r13 = r->r13;
    tf->r14 = r->r14, tf->r15 = r->r15;
    tf->rip = r->rip;
    tf->rsp = r->rsp;
    tf->rflags = (r->rflags & USER_RFLAGS_MASK) | 0x202;
    tf->cs = SEL_UCODE;
    tf->ss = SEL_UDATA;
    return 0;
}
