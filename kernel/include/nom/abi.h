/*
 * nom kernel/application ABI: the whole contract between ring 0 and ring 3.
 *
 * This header is the only thing the kernel and libnom share. It is plain C11, has no
 * dependencies but <stdint.h>-style fixed-width types (taken from the compiler's own
 * <stdint.h>), and is included by both sides unchanged.
 *
 * Rules an application MUST follow:
 *  - System calls use the `syscall` instruction: number in rax, arguments in rdi, rsi, rdx,
 *    r10, r8, r9 (the Linux convention, r10 instead of rcx). rcx and r11 are clobbered; every
 *    other register, including all FPU/SSE/AVX state, is preserved.
 *  - The result comes back in rax: >= 0 is success, a negative value is -NOM_E*.
 *  - Pointers passed to the kernel must point into the caller's own user mappings with the
 *    access the call needs; otherwise the call fails with -NOM_EFAULT and nothing changes.
 *  - An application MUST NOT rely on any kernel mapping or on the layout of kernel memory.
 *
 * What an application MAY rely on:
 *  - The bulletin board is mapped read-only at NOM_BB_ADDR in every application, for the
 *    application's whole life. Readers use the seqlock in struct nom_bb (see bb_read in libnom).
 *  - The TSC is invariant and its frequency is nom_bb.tsc_hz: time needs no system call.
 *  - Upcalls (page faults, device interrupts, notifications, timer) are delivered on the
 *    registered upcall stack, one at a time per context, as described at struct nom_upcall_frame.
 *  - The kernel never touches the FPU/SSE/AVX registers of the running application except to
 *    save and restore them around a switch to another context. An upcall handler that uses
 *    floating point must save and restore that state itself.
 *
 * Units: time is in TSC ticks unless a name says _ns or _us; prices are in micro-dollars
 * (1e-6 $) per the resource's unit (bandwidth: per Gbit), stored as int64 so the kernel, which
 * has no floating point, can copy them.
 */
#ifndef NOM_ABI_H
#define NOM_ABI_H

#include <stdint.h>

#define NOM_ABI_VERSION 1
#define NOM_PAGE_SIZE 4096ull

/* ---- Address-space layout (every application) ---------------------------------------- */
/* Application ELF images link at 0x400000 (linker/app.ld). Below it nothing is mapped. */
#define NOM_USER_MIN          0x0000000000400000ull
#define NOM_USER_MAX          0x00007ffffffff000ull /* exclusive */
/* Device BARs granted by NOM_SYS_DEVICE_ACQUIRE are mapped inside this window. */
#define NOM_DEVICE_WINDOW     0x00007e0000000000ull
#define NOM_DEVICE_WINDOW_END 0x00007f0000000000ull
/* The bulletin board: NOM_BB_PAGES read-only pages. */
#define NOM_BB_ADDR           0x00007f0000000000ull
#define NOM_BB_PAGES          4
/* The initial stack of an application's first context: NOM_STACK_PAGES mapped below
 * NOM_STACK_TOP; argc/argv/envp sit at its top (struct nom_start_info). */
#define NOM_STACK_TOP         0x00007ffffff00000ull
#define NOM_STACK_PAGES       64

/* ---- Errors (returned negated) ---------------------------------------------------------- */
enum nom_error {
    NOM_EPERM = 1,   /* not allowed: resource owned by someone else, privileged call */
    NOM_ENOENT = 2,  /* no such device, application, mapping */
    NOM_EINVAL = 3,  /* malformed argument: misaligned, out of range, unknown flag */
    NOM_EFAULT = 4,  /* a pointer argument does not point to accessible user memory */
    NOM_ENOMEM = 5,  /* out of physical memory or kernel objects */
    NOM_EBUSY = 6,   /* resource already acquired / address already mapped */
    NOM_ENOSYS = 7,  /* unknown system call number */
    NOM_EAGAIN = 8,  /* nothing to do now; try again */
};

/* ---- System calls ---------------------------------------------------------------------- */
enum nom_syscall {
    /* console_write(const char *buf, uint64_t len) -> bytes written. To COM1, prefixed by
     * nothing: the application formats its own lines. */
    NOM_SYS_CONSOLE_WRITE = 0,
    /* exit(int64_t status): ends the whole application (all its contexts). No return. */
    NOM_SYS_EXIT = 1,
    /* mem_map(uint64_t vaddr, uint64_t npages, uint64_t flags) -> 0. Maps npages fresh zeroed
     * frames at vaddr (page aligned, inside [NOM_USER_MIN, NOM_DEVICE_WINDOW)). NOM_MAP_CONTIG
     * makes the frames physically contiguous (for DMA rings). -EBUSY if any page is mapped;
     * -ENOMEM past the application's mem_limit_pages (bulletin board) or when the call would
     * eat into the few MiB the kernel keeps for itself. */
    NOM_SYS_MEM_MAP = 2,
    /* mem_unmap(uint64_t vaddr, uint64_t npages) -> 0. Frees the frames; unmapped pages in the
     * range are skipped. Device and bulletin-board pages cannot be unmapped this way. When it
     * returns, no core of the application can reach the pages any more (TLB shootdown). */
    NOM_SYS_MEM_UNMAP = 3,
    /* mem_protect(uint64_t vaddr, uint64_t npages, uint64_t flags) -> 0; every page must be
     * mapped memory of the caller. */
    NOM_SYS_MEM_PROTECT = 4,
    /* virt_to_phys(uint64_t vaddr) -> physical address (trusted mode DMA, paper 3.5). */
    NOM_SYS_VIRT_TO_PHYS = 5,
    /* device_acquire(uint32_t bb_index, struct nom_device_grant *out) -> 0. Resets the device
     * and makes the caller its owner, maps its memory BARs into NOM_DEVICE_WINDOW (uncached),
     * except the pages holding the MSI-X table and pending bits (the kernel's: left unmapped),
     * grants its I/O-port BARs through the caller's I/O bitmap, enables bus mastering. -EBUSY
     * if owned; -EPERM for devices that are never handed out (bridges, devices the kernel
     * cannot reset: today only virtio devices can be acquired). */
    NOM_SYS_DEVICE_ACQUIRE = 6,
    /* device_release(uint32_t bb_index) -> 0. Detaches vectors, unmaps and revokes ports on
     * every core, resets the device and turns bus mastering off. The owner's death does the
     * same. */
    NOM_SYS_DEVICE_RELEASE = 7,
    /* irq_attach(uint32_t bb_index, uint32_t msix_entry, uint64_t cookie) -> 0. Allocates a
     * vector, programs MSI-X table entry msix_entry of an owned device to it and enables MSI-X.
     * Each interrupt becomes a NOM_UPCALL_IRQ carrying cookie. The table stays the kernel's. */
    NOM_SYS_IRQ_ATTACH = 8,
    /* upcall_register(uint64_t entry, uint64_t stack_top, struct nom_upcall_ctl *ctl) -> 0.
     * For the calling context. entry == 0 unregisters (faults then kill the application). */
    NOM_SYS_UPCALL_REGISTER = 9,
    /* upcall_return(const struct nom_upcall_frame *frame): resumes the interrupted context
     * from frame->regs and re-enables upcall delivery. No return. rflags are sanitized. */
    NOM_SYS_UPCALL_RETURN = 10,
    /* core_acquire(uint64_t entry, uint64_t stack_top, uint64_t arg) -> cpu index. Starts a
     * new context of the caller at entry(arg) on a free vCPU. -EBUSY if none is free. */
    NOM_SYS_CORE_ACQUIRE = 11,
    /* core_release(void): ends the calling context; the last context's release is exit(0). */
    NOM_SYS_CORE_RELEASE = 12,
    /* yield(void) -> 0: lets another runnable context use this vCPU. */
    NOM_SYS_YIELD = 13,
    /* block(uint64_t deadline_tsc, struct nom_wake_events *events) -> NOM_WAKE_* bits. Sleeps
     * until an interrupt of an owned device, a notification, or the TSC reaching deadline_tsc
     * (0: no deadline). Returns at once if an upcall is pending. Pending upcalls are delivered
     * on the way out. A context without an upcall handler gets its pending events as wake bits
     * instead, and they are cleared. With events non-NULL the pending interrupts, notifications
     * and timer expiry are not delivered as upcalls but written to *events (only its first
     * nirqs cookies) and cleared, on entry or at wake-up: a caller that holds upcalls to close
     * the race with them (ctl->disabled) handles them itself, with no upcall frame, yield and
     * upcall_return per wake-up. *events is written on every return >= 0 (what = 0: nothing
     * was pending); -EFAULT (nothing cleared) if it is not writable. */
    NOM_SYS_BLOCK = 14,
    /* timer_set(uint64_t deadline_tsc) -> 0: one NOM_UPCALL_TIMER at deadline (0 cancels). */
    NOM_SYS_TIMER_SET = 15,
    /* notify(uint32_t app_id, uint64_t bits) -> 0: ORs bits into the target's notification
     * word and wakes it (an IPI if it runs on another vCPU); it gets a NOM_UPCALL_NOTIFY.
     * An application may always notify itself; another application only if it was started
     * with the `nom.notify` module flag (-EPERM otherwise). */
    NOM_SYS_NOTIFY = 16,
    /* price_publish(uint32_t slot, const struct nom_bb_price *price) -> 0. Only the application
     * started with the `nom.price-publisher` module flag may call it (-EPERM otherwise). Every
     * application subscribed with NOM_SYS_APP_REPORT's flag gets notification NOM_NOTIFY_PRICE. */
    NOM_SYS_PRICE_PUBLISH = 17,
    /* app_report(const struct nom_bb_app_report *report) -> 0: the caller's own row on the
     * bulletin board (batching delay, price seen, profit rate, price subscription). */
    NOM_SYS_APP_REPORT = 18,
    /* pci_config_read(uint32_t bb_index, uint32_t offset, uint32_t size) -> value; owned
     * devices only; size 1, 2 or 4, naturally aligned, offset < 256 (the conventional
     * configuration space: PCI Express's extended space is not offered), else -EINVAL. */
    NOM_SYS_PCI_CONFIG_READ = 19,
    /* pci_config_write(uint32_t bb_index, uint32_t offset, uint32_t size, uint32_t value) -> 0;
     * owned devices only. Only the command register (offset 4, size 1 or 2), and in it only
     * memory/I-O decoding for the BAR kinds the device has, bus mastering and INTx disable;
     * any other change, and every other register, is the kernel's (-EPERM). */
    NOM_SYS_PCI_CONFIG_WRITE = 20,
    /* set_fs_base(uint64_t base) -> 0: the calling context's FS base (thread pointer for TLS);
     * saved and restored by the kernel with the context. Must be a canonical user address. */
    NOM_SYS_SET_FS_BASE = 21,
    NOM_SYS_COUNT
};

/* mem_map / mem_protect flags */
#define NOM_MAP_READ   0x1u
#define NOM_MAP_WRITE  0x2u
#define NOM_MAP_EXEC   0x4u
#define NOM_MAP_CONTIG 0x8u /* mem_map only */

/* block() result bits */
#define NOM_WAKE_IRQ      0x1u
#define NOM_WAKE_NOTIFY   0x2u
#define NOM_WAKE_DEADLINE 0x4u
#define NOM_WAKE_UPCALL   0x8u /* an upcall was pending on entry */

/* What block() hands over when given an events pointer. */
#define NOM_WAKE_MAX_IRQS 16
struct nom_wake_events {
    uint32_t what;        /* NOM_WAKE_IRQ | NOM_WAKE_NOTIFY | NOM_WAKE_DEADLINE (timer) taken */
    uint32_t nirqs;       /* irq_cookies[0 .. nirqs) are valid */
    uint64_t timer_fired; /* NOM_WAKE_DEADLINE: the timer_set deadline that fired */
    uint64_t notify_bits; /* NOM_WAKE_NOTIFY: the notification bits */
    uint64_t irq_cookies[NOM_WAKE_MAX_IRQS]; /* NOM_WAKE_IRQ: the cookies of irq_attach */
};

/* Notification bits with a fixed meaning; the rest are the applications' to agree on. */
#define NOM_NOTIFY_PRICE 0x1ull

/* ---- Devices ---------------------------------------------------------------------------- */
#define NOM_PCI_BARS 6
enum nom_bar_kind { NOM_BAR_NONE = 0, NOM_BAR_MEM = 1, NOM_BAR_IO = 2 };

struct nom_device_grant {
    /* Per BAR: where the kernel mapped it (memory BARs) or its first port (I/O BARs). */
    uint64_t bar_addr[NOM_PCI_BARS];
    uint64_t bar_size[NOM_PCI_BARS];
    uint32_t bar_kind[NOM_PCI_BARS]; /* enum nom_bar_kind */
    uint32_t msix_entries;           /* size of the MSI-X table, 0 if none */
};

/* ---- Upcalls ---------------------------------------------------------------------------- */
/*
 * The kernel delivers an upcall by saving the interrupted user context in a struct
 * nom_upcall_frame pushed on the context's upcall stack (16-byte aligned), then entering the
 * registered entry with rdi = frame, rsp = frame (minus a zero return address), in ring 3 with
 * interrupts on. A page fault while upcalls are held (ctl->disabled set) cannot be delivered and
 * ends the application. While ctl->disabled is non-zero (the kernel sets it to 1 at delivery), further
 * upcalls are held: the kernel sets ctl->pending and delivers them when the application calls
 * upcall_return, yield or block. The handler ends with upcall_return(frame) (it may edit
 * frame->regs first, e.g. to switch user threads).
 */
enum nom_upcall_type {
    NOM_UPCALL_PAGE_FAULT = 1, /* arg0 = faulting address, arg1 = x86 error code */
    NOM_UPCALL_IRQ = 2,        /* arg0 = cookie given to irq_attach */
    NOM_UPCALL_NOTIFY = 3,     /* arg0 = notification bits (cleared by delivery) */
    NOM_UPCALL_TIMER = 4,      /* arg0 = deadline that fired */
};

struct nom_regs {
    uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rip, rsp, rflags;
};

struct nom_upcall_frame {
    uint64_t type; /* enum nom_upcall_type */
    uint64_t arg0;
    uint64_t arg1;
    uint64_t reserved;
    struct nom_regs regs;
};

struct nom_upcall_ctl {
    volatile uint32_t disabled; /* non-zero: hold upcalls (set by the kernel on delivery) */
    volatile uint32_t pending;  /* set by the kernel while an upcall is held */
};

/* ---- Start-up --------------------------------------------------------------------------- */
/* rsp at an application's entry points to this (16-byte aligned); the strings follow it.
 * A module's command line reads like env(1): `[nom.FLAG ...] [VAR=value ...] NAME ARG ...`.
 * Leading `nom.` words are for the kernel (`nom.price-publisher`, `nom.notify`: may notify
 * other applications, `nom.mem-limit=MiB`, `nom.cpu=N`); the VAR=value words that
 * follow become the environment; NAME and the rest are argv. */
struct nom_start_info {
    uint64_t argc;
    char **argv;   /* argc entries, then NULL */
    char **envp;   /* NULL-terminated */
    uint32_t app_id;
    uint32_t cpu;  /* vCPU this first context runs on */
};

/* ---- Bulletin board --------------------------------------------------------------------- */
#define NOM_BB_MAGIC 0x6472616f626e6f6dull /* "monboard" little-endian */
#define NOM_BB_MAX_CPUS 64
#define NOM_BB_MAX_DEVICES 64
#define NOM_BB_MAX_PRICES 8
#define NOM_BB_MAX_APPS 32
#define NOM_NAME_LEN 32
#define NOM_NO_OWNER 0xffffffffu

struct nom_bb_cpu {
    uint32_t apic_id;
    uint32_t online;
    uint32_t owner; /* app id, or NOM_NO_OWNER */
    uint32_t reserved;
};

enum nom_device_state { NOM_DEV_FREE = 0, NOM_DEV_OWNED = 1 };

struct nom_bb_device {
    uint8_t bus, slot, function, reserved0;
    uint16_t vendor, device;
    uint8_t class_code, subclass, prog_if, revision;
    uint32_t owner; /* app id, or NOM_NO_OWNER */
    uint32_t state; /* enum nom_device_state */
    uint64_t bar_base[NOM_PCI_BARS]; /* physical address or first port */
    uint64_t bar_size[NOM_PCI_BARS];
    uint32_t bar_kind[NOM_PCI_BARS];
};

enum nom_resource { NOM_RES_BANDWIDTH = 1 };
enum nom_unit { NOM_UNIT_GBIT = 1 };

struct nom_bb_price {
    uint32_t resource; /* enum nom_resource; 0: empty slot */
    uint32_t unit;     /* enum nom_unit */
    int64_t price_micro; /* micro-dollars per unit */
    uint64_t timestamp_ns; /* provider's time of the price (Unix epoch ns), 0 if unknown */
    uint64_t sequence;     /* incremented on every publication of this slot */
    /* NOM_PRICE_STALE: the publisher cannot confirm the price now (provider down, too slow,
     * garbage, an absurd price); price_micro is the last good one. Readers fall back to a
     * safe choice rather than trust it (nom/adapt.h). */
    uint32_t flags;
    uint32_t reserved;
    /* With NOM_PRICE_STALE: the TSC of the publisher's last good answer; the staleness's age is
     * (now - stale_since_tsc) / tsc_hz. 0 otherwise. */
    uint64_t stale_since_tsc;
};
#define NOM_PRICE_STALE 0x1u

enum nom_app_state { NOM_APP_EMPTY = 0, NOM_APP_RUNNING = 1, NOM_APP_EXITED = 2, NOM_APP_KILLED = 3 };

/* What an application reports about itself (NOM_SYS_APP_REPORT). */
struct nom_bb_app_report {
    uint32_t batching_delay_ns;
    uint32_t subscribe_prices; /* non-zero: notify me (NOM_NOTIFY_PRICE) on price changes */
    int64_t price_seen_micro;  /* bandwidth price the application currently acts on */
    int64_t profit_rate_micro; /* its current profit rate, micro-dollars per second */
};

struct nom_bb_app {
    uint32_t id;
    uint32_t state;   /* enum nom_app_state */
    char name[NOM_NAME_LEN];
    uint32_t cores;   /* contexts running */
    uint32_t mem_limit_pages; /* mem_pages never exceeds it (module flag nom.mem-limit=MiB) */
    uint64_t mem_pages;
    uint64_t cpu_ns;  /* CPU time its contexts have used, republished when a context leaves a CPU */
    int64_t exit_status;
    struct nom_bb_app_report report;
};

struct nom_bb {
    uint64_t magic;       /* NOM_BB_MAGIC */
    uint32_t abi_version; /* NOM_ABI_VERSION */
    uint32_t size;        /* sizeof(struct nom_bb) */
    /* Seqlock: odd while the kernel writes. A reader copies what it needs and retries if the
     * generation was odd or changed meanwhile. */
    volatile uint64_t generation;
    uint64_t tsc_hz;
    uint64_t boot_tsc;
    uint64_t boot_unix_ns; /* wall-clock time (Unix epoch, ns) at boot_tsc, from the RTC */
    uint64_t mem_total_bytes;
    uint64_t mem_free_bytes;
    uint32_t ncpus, ndevices, napps, reserved;
    struct nom_bb_cpu cpus[NOM_BB_MAX_CPUS];
    struct nom_bb_device devices[NOM_BB_MAX_DEVICES];
    struct nom_bb_price prices[NOM_BB_MAX_PRICES];
    struct nom_bb_app apps[NOM_BB_MAX_APPS];
};

_Static_assert(sizeof(struct nom_bb) <= NOM_BB_PAGES * NOM_PAGE_SIZE, "bulletin board too big");

#endif /* NOM_ABI_H */
