/* spinlock.c: the big kernel lock. The kernel runs with interrupts off; every entry from ring 3
 * (system call, interrupt, exception) takes this lock and the way back out releases it, so shared
 * kernel state needs no finer locking. The data path never enters the kernel, so one lock costs
 * nothing where it matters (paper 3.3). A ticket lock keeps vCPUs fair. */
#include "defs.h"

static volatile uint32_t next_ticket, now_serving;

void klock_acquire(void) {
    uint32_t t = __atomic_fetch_add(&next_ticket, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&now_serving, __ATOMIC_ACQUIRE) != t) {
        sched_sync_poll(); /* the holder may wait for this CPU's SYNC (sched_forget_app) */
        __asm__ volatile("pause");
    }
}

void klock_release(void) {
    __atomic_store_n(&now_serving, now_serving + 1, __ATOMIC_RELEASE);
}
