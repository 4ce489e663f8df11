/* cpu.h: per-CPU state (reached through GS), the trap frame, and descriptor-table layout. */
#ifndef NOM_CPU_H
#define NOM_CPU_H

#include "defs.h"

/* GDT selectors. sysret needs user data right below user code (STAR, Intel SDM 5.8.8). */
#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UDATA 0x1b
#define SEL_UCODE 0x23
#define SEL_TSS   0x28

/* Vectors. */
#define VEC_IRQ_FIRST 48   /* device MSI-X vectors are allocated from here */
#define VEC_IRQ_LAST  239
#define VEC_TIMER     240
#define VEC_RESCHED   241  /* IPI: re-run the scheduler on this CPU */
#define VEC_SYNC      242  /* IPI: drop cached TLB entries / I/O bitmap (sched_sync_app) */
#define VEC_IOMMU     243  /* the IOMMU's fault event (iommu.c), to CPU 0 */
#define VEC_SPURIOUS  255

/* Pushed by entry.S on every kernel entry; the same layout for syscalls, so one exit path. */
struct trapframe {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss; /* the hardware interrupt frame */
};

struct tss {
    uint32_t reserved0;
    uint64_t rsp0, rsp1, rsp2;
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
    uint8_t iomap[8192];
    uint8_t iomap_end; /* must be 0xff (SDM 19.5.2) */
} __attribute__((packed));

struct cpu {
    /* Offsets 0-31 are used by entry.S: keep them. */
    struct cpu *self;
    uint64_t kstack_top;   /* kernel stack of the running context (syscall entry) */
    uint64_t user_rsp;     /* scratch for syscall entry */
    uint64_t index;
    /* C only */
    uint32_t apic_id;
    bool online;
    struct ctx *current;   /* running context, NULL in the idle loop */
    /* The page tables vm_switch last loaded here (0: the boot ones). In the idle loop they
     * may be the last application's (sched.c switch_to, idle_on). */
    uint64_t pml4_loaded;
    struct ctx *run_head, *run_tail; /* runnable contexts of this CPU, round-robin */
    uint64_t idle_ksp;     /* the idle loop's saved stack pointer */
    uint64_t slice_end;    /* TSC deadline of the current time slice, 0 if none */
    uint64_t timer_armed;  /* TSC deadline the LAPIC timer is armed for, 0 if none (sched.c) */
    bool need_resched;     /* switch contexts before returning to ring 3 */
    uint64_t idle_tsc, idle_since;
    const uint8_t *io_bitmap_loaded;
    volatile uint32_t sync_pending; /* SYNC_* this CPU must apply before running ring 3 again */
    volatile bool in_kernel; /* false only from the exit to ring 3 until the next kernel entry */
    uint64_t gdt[7];
    struct tss tss __attribute__((aligned(16)));
};

extern struct cpu cpus[MAX_CPUS];
extern int ncpus;

#endif
