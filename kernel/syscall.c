/* syscall.c: the system call table (kernel/include/nom/abi.h). Every argument is checked before
 * use: an unknown number, a bad pointer, an out-of-range index or someone else's resource gets a
 * negative error code, never a crash. Only control-plane work comes here (paper 3.3). */
#include "defs.h"
#include "cpu.h"
#include "app.h"
#include "pci.h"

#define MSR_EFER 0xc0000080
#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_FMASK 0xc0000084

extern char syscall_entry[];

void syscall_init_this(void) {
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | 1); /* SCE */
    /* sysret: CS = 0x10+16 | 3 (user code), SS = 0x10+8 | 3 (user data); syscall: CS = 0x08. */
    wrmsr(MSR_STAR, ((uint64_t)0x10 << 48) | ((uint64_t)SEL_KCODE << 32));
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    wrmsr(MSR_FMASK, 0x47700); /* clear IF, TF, DF, AC, NT, IOPL on entry */
}

static bool user_addr_ok(uint64_t va, uint64_t len) {
    return va >= NOM_USER_MIN && va < NOM_USER_MAX && len <= NOM_USER_MAX - va;
}

static int64_t sys_console_write(struct ctx *c, uint64_t buf, uint64_t len) {
    char chunk[256];
    if (len > (1 << 20))
        return -NOM_EINVAL;
    for (uint64_t done = 0; done < len;) {
        uint64_t n = len - done < sizeof chunk ? len - done : sizeof chunk;
        if (copy_from_user(c->app->pml4, chunk, buf + done, n) < 0)
            return done ? (int64_t)done : -NOM_EFAULT;
        console_write(chunk, n);
        done += n;
    }
    return (int64_t)len;
}

/* The present PTE of the page at va, or NULL; *next is the next page worth looking at: past the
 * whole 2 MiB when va has no page table, so a call over a huge empty range walks each 2 MiB
 * once, not each page (all of this runs under the kernel lock). */
static uint64_t *present_pte(uint64_t pml4, uint64_t va, uint64_t *next) {
    uint64_t *pte = vm_lookup(pml4, va);
    *next = pte ? va + PAGE_SIZE : (va | ((2ull << 20) - 1)) + 1;
    return pte && (*pte & PTE_P) ? pte : NULL;
}

/* Maps npages zeroed frames; all or nothing. */
/* A device a owns may reach the pages just mapped (iommu.c); if the IOMMU's tables cannot
 * grow, the whole call is undone. */
static int64_t iommu_map_range(struct app *a, uint64_t va, uint64_t npages) {
    for (uint64_t i = 0; i < npages; i++)
        if (iommu_map_frame(a, *vm_lookup(a->pml4, va + i * PAGE_SIZE) & PTE_ADDR) < 0)
            break;
        else if (i + 1 == npages)
            return 0;
    for (uint64_t i = 0; i < npages; i++) {
        iommu_unmap_frame(a, *vm_lookup(a->pml4, va + i * PAGE_SIZE) & PTE_ADDR);
        vm_unmap_page(a->pml4, va + i * PAGE_SIZE);
        a->mem_pages--;
    }
    iommu_flush(a);
    sched_sync_app(a, SYNC_TLB);
    return -NOM_ENOMEM;
}

static int64_t sys_mem_map(struct ctx *c, uint64_t va, uint64_t npages, uint64_t flags) {
    struct app *a = c->app;
    if ((va & (PAGE_SIZE - 1)) || npages == 0 || npages > (1ull << 24) ||
        (flags & ~(uint64_t)(NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_EXEC | NOM_MAP_CONTIG)))
        return -NOM_EINVAL;
    if (va < NOM_USER_MIN || va >= NOM_DEVICE_WINDOW || npages > (NOM_DEVICE_WINDOW - va) / PAGE_SIZE)
        return -NOM_EINVAL;
    if (!app_may_take(a, npages)) /* first: it bounds the walk below by free memory */
        return -NOM_ENOMEM;
    for (uint64_t p = va, end = va + npages * PAGE_SIZE, next; p < end; p = next)
        if (present_pte(a->pml4, p, &next))
            return -NOM_EBUSY;
    uint64_t pte_flags = PTE_P | PTE_U | PTE_SW_FRAME | ((flags & NOM_MAP_WRITE) ? PTE_W : 0) |
                         ((flags & NOM_MAP_EXEC) ? 0 : PTE_NX);
    uint64_t contig = 0;
    if (flags & NOM_MAP_CONTIG) {
        contig = frame_alloc_contig(npages);
        if (!contig)
            return -NOM_ENOMEM;
    }
    for (uint64_t i = 0; i < npages; i++) {
        uint64_t pa = contig ? contig + i * PAGE_SIZE : frame_alloc();
        if (!pa || vm_map_page(a->pml4, va + i * PAGE_SIZE, pa, pte_flags) < 0) {
            if (pa)
                frame_free(pa);
            for (uint64_t j = contig ? i + 1 : npages; contig && j < npages; j++)
                frame_free(contig + j * PAGE_SIZE);
            for (uint64_t j = 0; j < i; j++) {
                vm_unmap_page(a->pml4, va + j * PAGE_SIZE);
                a->mem_pages--;
            }
            return -NOM_ENOMEM;
        }
        a->mem_pages++;
    }
    return iommu_map_range(a, va, npages);
}

static int64_t sys_mem_unmap(struct ctx *c, uint64_t va, uint64_t npages) {
    struct app *a = c->app;
    if ((va & (PAGE_SIZE - 1)) || npages == 0 || !user_addr_ok(va, npages * PAGE_SIZE) ||
        npages > (1ull << 24))
        return -NOM_EINVAL;
    uint64_t end = va + npages * PAGE_SIZE, next;
    for (uint64_t p = va; p < end; p = next) {
        uint64_t *pte = present_pte(a->pml4, p, &next);
        if (pte && !(*pte & PTE_SW_FRAME))
            return -NOM_EPERM; /* device or bulletin-board page */
    }
    for (uint64_t p = va; p < end; p = next) {
        uint64_t *pte = present_pte(a->pml4, p, &next);
        if (pte) {
            iommu_unmap_frame(a, *pte & PTE_ADDR);
            vm_unmap_page(a->pml4, p);
            a->mem_pages--;
        }
    }
    iommu_flush(a);
    sched_sync_app(a, SYNC_TLB); /* before any freed frame can be someone else's */
    return 0;
}

static int64_t sys_mem_protect(struct ctx *c, uint64_t va, uint64_t npages, uint64_t flags) {
    struct app *a = c->app;
    if ((va & (PAGE_SIZE - 1)) || npages == 0 || npages > (1ull << 24) ||
        !user_addr_ok(va, npages * PAGE_SIZE) ||
        (flags & ~(uint64_t)(NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_EXEC)))
        return -NOM_EINVAL;
    for (uint64_t i = 0; i < npages; i++) {
        uint64_t *pte = vm_lookup(a->pml4, va + i * PAGE_SIZE);
        if (!pte || !(*pte & PTE_P) || !(*pte & PTE_SW_FRAME))
            return -NOM_ENOENT;
    }
    for (uint64_t i = 0; i < npages; i++) {
        uint64_t *pte = vm_lookup(a->pml4, va + i * PAGE_SIZE);
        *pte = (*pte & ~(PTE_W | PTE_NX)) | ((flags & NOM_MAP_WRITE) ? PTE_W : 0) |
               ((flags & NOM_MAP_EXEC) ? 0 : PTE_NX);
        vm_flush_page(va + i * PAGE_SIZE);
    }
    sched_sync_app(a, SYNC_TLB);
    return 0;
}

static int64_t sys_virt_to_phys(struct ctx *c, uint64_t va) {
    if (!user_addr_ok(va, 1))
        return -NOM_EINVAL;
    uint64_t *pte = vm_lookup(c->app->pml4, va);
    if (!pte || !(*pte & PTE_P) || !(*pte & PTE_U))
        return -NOM_ENOENT;
    return (int64_t)((*pte & PTE_ADDR) | (va & (PAGE_SIZE - 1)));
}

static int64_t sys_upcall_register(struct ctx *c, uint64_t entry, uint64_t stack, uint64_t ctl) {
    if (entry == 0) {
        c->upcall_entry = c->upcall_stack = c->upcall_ctl = 0;
        return 0;
    }
    if (!user_addr_ok(entry, 1) || !user_addr_ok(stack - 1, 1) ||
        (ctl & 7) || !vm_user_range_ok(c->app->pml4, ctl, sizeof(struct nom_upcall_ctl), true))
        return -NOM_EINVAL;
    c->upcall_entry = entry;
    c->upcall_stack = stack & ~15ull;
    c->upcall_ctl = ctl;
    return 0;
}

/* Without an upcall handler, pending events cannot be delivered: block reports them as wake
 * bits once instead (so notify still wakes such an application). */
static uint32_t take_events_as_wake_bits(struct ctx *c) {
    uint32_t bits = (c->irq_pending ? NOM_WAKE_IRQ : 0) | (c->notify_pending ? NOM_WAKE_NOTIFY : 0) |
                    (c->timer_pending ? NOM_WAKE_DEADLINE : 0);
    c->irq_pending = 0;
    c->notify_pending = 0;
    c->timer_pending = false;
    return bits;
}

_Static_assert(NOM_WAKE_MAX_IRQS >= MAX_IRQS_PER_CTX, "every irq slot fits nom_wake_events");

/* block's events pointer (abi.h): the pending events go to *uev and are cleared, in one copy
 * (a wake-up delivered as an upcall took a yield, an upcall frame and an upcall_return: about
 * 1,000 guest instructions and two more kernel entries). Nothing is cleared on -EFAULT. */
static int64_t take_events(struct ctx *c, uint64_t uev, uint32_t bits) {
    struct nom_wake_events ev = {0};
    if (c->timer_pending) {
        ev.what |= NOM_WAKE_DEADLINE;
        ev.timer_fired = c->timer_fired;
    }
    if (c->notify_pending) {
        ev.what |= NOM_WAKE_NOTIFY;
        ev.notify_bits = c->notify_pending;
    }
    for (uint32_t p = c->irq_pending; p; p &= p - 1)
        ev.irq_cookies[ev.nirqs++] = c->irq_cookie[__builtin_ctz(p)];
    if (ev.nirqs)
        ev.what |= NOM_WAKE_IRQ;
    uint64_t len = __builtin_offsetof(struct nom_wake_events, irq_cookies) + ev.nirqs * 8ull;
    if (copy_to_user(c->app->pml4, uev, &ev, len) < 0)
        return -NOM_EFAULT;
    return bits | take_events_as_wake_bits(c);
}

static int64_t sys_block(struct ctx *c, uint64_t deadline, uint64_t uev) {
    if (upcall_pending(c)) {
        if (uev)
            return take_events(c, uev, 0);
        return c->upcall_entry ? NOM_WAKE_UPCALL : take_events_as_wake_bits(c);
    }
    if (deadline && deadline <= rdtsc())
        return uev ? take_events(c, uev, NOM_WAKE_DEADLINE) : NOM_WAKE_DEADLINE;
    c->state = CTX_BLOCKED;
    c->in_block = true;
    c->block_deadline = deadline;
    c->wake_bits = 0;
    sched_reprogram_timer();
    schedule(); /* back here when woken */
    c->in_block = false;
    if (uev)
        return take_events(c, uev, c->wake_bits);
    if (!c->upcall_entry)
        take_events_as_wake_bits(c);
    return c->wake_bits;
}

static int64_t sys_timer_set(struct ctx *c, uint64_t deadline) {
    c->timer_deadline = deadline;
    sched_reprogram_timer();
    return 0;
}

static int64_t sys_notify(struct ctx *c, uint64_t app_id, uint64_t bits) {
    struct app *t = app_by_id((uint32_t)app_id);
    if (app_id > 0xffffffffull || !t || t->state != NOM_APP_RUNNING || !t->ctxs)
        return -NOM_ENOENT;
    if (t != c->app && !c->app->may_notify)
        return -NOM_EPERM;
    if (bits == 0)
        return -NOM_EINVAL;
    t->ctxs->notify_pending |= bits;
    sched_wake(t->ctxs, NOM_WAKE_NOTIFY);
    return 0;
}

static int64_t sys_price_publish(struct ctx *c, uint64_t slot, uint64_t uprice) {
    struct nom_bb_price p;
    if (!c->app->price_publisher)
        return -NOM_EPERM;
    if (slot >= NOM_BB_MAX_PRICES)
        return -NOM_EINVAL;
    if (copy_from_user(c->app->pml4, &p, uprice, sizeof p) < 0)
        return -NOM_EFAULT;
    struct nom_bb *bb = bb_begin_write();
    p.sequence = bb->prices[slot].sequence + 1;
    bb->prices[slot] = p;
    bb_end_write();
    for (int i = 0; i < MAX_APPS; i++) {
        struct app *a = &apps[i];
        if (a->used && a->state == NOM_APP_RUNNING && a->subscribed && a->ctxs) {
            a->ctxs->notify_pending |= NOM_NOTIFY_PRICE;
            sched_wake(a->ctxs, NOM_WAKE_NOTIFY);
        }
    }
    return 0;
}

static int64_t sys_app_report(struct ctx *c, uint64_t ureport) {
    struct nom_bb_app_report r;
    if (copy_from_user(c->app->pml4, &r, ureport, sizeof r) < 0)
        return -NOM_EFAULT;
    c->app->subscribed = r.subscribe_prices != 0;
    struct nom_bb *bb = bb_begin_write();
    bb->apps[c->app->id - 1].report = r;
    bb_end_write();
    return 0;
}

static int64_t sys_pci_config(struct ctx *c, uint64_t index, uint64_t off, uint64_t size,
                              bool write, uint64_t value) {
    struct pci_dev *d = index > 0xffffffffull ? NULL : pci_device((uint32_t)index);
    if (!d)
        return -NOM_ENOENT;
    if (d->owner != c->app->id) /* the kernel's own record: reading needs no board write */
        return -NOM_EPERM;
    if ((size != 1 && size != 2 && size != 4) || (off & (size - 1)) || off >= 256)
        return -NOM_EINVAL;
    if (!write)
        return pci_config_read(d, (uint32_t)off, (uint32_t)size);
    if (!pci_config_write_allowed(d, (uint32_t)off, (uint32_t)size, (uint32_t)value))
        return -NOM_EPERM;
    pci_config_write(d, (uint32_t)off, (uint32_t)size, (uint32_t)value);
    return 0;
}

static int64_t syscall_do(struct ctx *c, struct trapframe *tf, bool *redirected) {
    uint64_t a0 = tf->rdi, a1 = tf->rsi, a2 = tf->rdx, a3 = tf->r10;
    switch (tf->rax) {
    case NOM_SYS_CONSOLE_WRITE: return sys_console_write(c, a0, a1);
    case NOM_SYS_EXIT: app_exit(c->app, (int64_t)a0); return 0;
    case NOM_SYS_MEM_MAP: return sys_mem_map(c, a0, a1, a2);
    case NOM_SYS_MEM_UNMAP: return sys_mem_unmap(c, a0, a1);
    case NOM_SYS_MEM_PROTECT: return sys_mem_protect(c, a0, a1, a2);
    case NOM_SYS_VIRT_TO_PHYS: return sys_virt_to_phys(c, a0);
    case NOM_SYS_DEVICE_ACQUIRE: return a0 > 0xffffffffull ? -NOM_ENOENT : device_acquire(c->app, (uint32_t)a0, a1);
    case NOM_SYS_DEVICE_RELEASE: return a0 > 0xffffffffull ? -NOM_ENOENT : device_release(c->app, (uint32_t)a0);
    case NOM_SYS_IRQ_ATTACH:
        if (a0 > 0xffffffffull || a1 > 0xffffffffull)
            return -NOM_EINVAL;
        return device_irq_attach(c, (uint32_t)a0, (uint32_t)a1, a2);
    case NOM_SYS_UPCALL_REGISTER: return sys_upcall_register(c, a0, a1, a2);
    case NOM_SYS_UPCALL_RETURN: {
        int r = upcall_return(c, tf, a0);
        if (r == 0)
            *redirected = true;
        return r;
    }
    case NOM_SYS_CORE_ACQUIRE: {
        if (!user_addr_ok(a0, 1) || !user_addr_ok(a1 - 1, 1))
            return -NOM_EINVAL;
        int cpu = sched_pick_cpu(true);
        if (cpu < 0)
            return -NOM_EBUSY;
        struct ctx *n = ctx_create(c->app, cpu, a0, a1 & ~15ull, a2);
        if (!n)
            return -NOM_ENOMEM;
        sched_add(n);
        return cpu;
    }
    case NOM_SYS_CORE_RELEASE:
        if (c->app->live_ctxs <= 1) {
            app_exit(c->app, 0);
        } else {
            c->state = CTX_DEAD;
            c->app->live_ctxs--;
        }
        return 0;
    case NOM_SYS_YIELD: this_cpu()->need_resched = true; return 0;
    case NOM_SYS_BLOCK: return sys_block(c, a0, a1);
    case NOM_SYS_TIMER_SET: return sys_timer_set(c, a0);
    case NOM_SYS_NOTIFY: return sys_notify(c, a0, a1);
    case NOM_SYS_PRICE_PUBLISH: return sys_price_publish(c, a0, a1);
    case NOM_SYS_APP_REPORT: return sys_app_report(c, a0);
    case NOM_SYS_PCI_CONFIG_READ: return sys_pci_config(c, a0, a1, a2, false, 0);
    case NOM_SYS_PCI_CONFIG_WRITE: return sys_pci_config(c, a0, a1, a2, true, a3);
    case NOM_SYS_SET_FS_BASE:
        if (a0 >= NOM_USER_MAX)
            return -NOM_EINVAL;
        c->fs_base = a0;
        wrmsr(0xc0000100, a0);
        return 0;
    default: return -NOM_ENOSYS;
    }
}

/* Returns 0 when sysret may return to ring 3 (the frame still describes the caller right after
 * its syscall instruction), non-zero when the frame was redirected and iretq must be used. */
uint64_t syscall_dispatch(struct trapframe *tf) {
    sched_enter_kernel();
    klock_acquire();
    struct ctx *c = this_cpu()->current;
    bool redirected = false;
    /* Another vCPU may have killed this application while this one waited for the lock: a dead
     * context must not act (sys_block would make it BLOCKED again, and a timer would later
     * resume it); trap_exit_to_user switches away from it for good. */
    if (c->state != CTX_DEAD) {
        int64_t r = syscall_do(c, tf, &redirected);
        if (!redirected)
            tf->rax = (uint64_t)r;
    }
    uint64_t rip = tf->rip;
    trap_exit_to_user(tf); /* may schedule, deliver an upcall (which rewrites tf) */
    if (redirected || tf->rip != rip)
        return 1;
    tf->rcx = tf->rip;
    tf->r11 = tf->rflags;
    return 0;
}
