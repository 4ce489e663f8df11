/* app.h: applications (one address space each) and their contexts (one per acquired core). */
#ifndef NOM_APP_H
#define NOM_APP_H

#include "defs.h"
#include "cpu.h"

#define MAX_APPS NOM_BB_MAX_APPS
#define MAX_IRQS_PER_CTX 16

enum ctx_state { CTX_RUNNABLE, CTX_RUNNING, CTX_BLOCKED, CTX_DEAD };

struct ctx {
    uint64_t ksp;               /* saved kernel stack pointer while switched out */
    uint64_t kstack;            /* base of KSTACK_SIZE bytes (direct map) */
    struct trapframe *tf;       /* the user frame at the top of kstack */
    struct app *app;
    int cpu;
    enum ctx_state state;
    struct ctx *run_next;       /* run queue of its CPU */
    struct ctx *app_next;       /* the app's contexts */
    uint8_t *fpu;               /* FPU/SSE/AVX save area (fpu_area_size bytes) */
    uint64_t run_since;         /* TSC when it last got the CPU */
    uint64_t fs_base, gs_base;  /* user FS/GS bases (wrfsbase is allowed in ring 3) */
    /* Waiting */
    uint64_t block_deadline;    /* TSC, 0: none; valid while CTX_BLOCKED */
    uint32_t wake_bits;         /* NOM_WAKE_* collected while blocked */
    bool in_block;
    /* Upcalls */
    uint64_t upcall_entry, upcall_stack, upcall_ctl;
    uint64_t timer_deadline;    /* NOM_SYS_TIMER_SET, 0: none */
    bool timer_pending;
    uint64_t timer_fired;
    uint64_t notify_pending;
    uint32_t irq_pending;       /* bit i: irq slot i fired */
    uint64_t irq_cookie[MAX_IRQS_PER_CTX];
    int irq_vector[MAX_IRQS_PER_CTX];
    uint32_t irq_device[MAX_IRQS_PER_CTX];
};

struct app {
    uint32_t id;                /* 1-based; 0 is "no app" */
    bool used;
    enum nom_app_state state;
    char name[NOM_NAME_LEN];
    uint64_t pml4;
    bool price_publisher;
    bool may_notify;            /* nom.notify: may notify other applications */
    uint64_t mem_limit;         /* pages; mem_pages never exceeds it */
    bool dying;
    int live_ctxs;
    struct ctx *ctxs;
    uint8_t *io_bitmap;         /* 8 KiB, bit set = port denied; NULL: no ports */
    uint64_t mem_pages;
    uint64_t cpu_tsc;           /* TSC ticks spent running */
    int64_t exit_status;
    bool subscribed;
};

extern struct app apps[MAX_APPS];

#endif
