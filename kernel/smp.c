/* smp.c: brings every vCPU the ACPI MADT lists online (Intel SDM vol. 3, 8.4.4). Each AP gets
 * its struct cpu, its own idle stack, then joins the scheduler's idle loop. */
#include "defs.h"
#include "cpu.h"

#define AP_TRAMPOLINE 0x8000

extern const char ap_trampoline_start[], ap_trampoline_end[];
extern uint64_t ap_tramp_pml4, ap_tramp_stack, ap_tramp_cpu;

static uint64_t *tramp_var(const void *sym) {
    return P2V(AP_TRAMPOLINE + ((const char *)sym - ap_trampoline_start));
}

void smp_boot_aps(const uint32_t *apic_ids, int n) {
    uint32_t me = lapic_id();
    memcpy(P2V(AP_TRAMPOLINE), ap_trampoline_start, ap_trampoline_end - ap_trampoline_start);
    for (int i = 0; i < n && ncpus < MAX_CPUS; i++) {
        if (apic_ids[i] == me)
            continue;
        struct cpu *c = &cpus[ncpus];
        c->index = ncpus;
        c->apic_id = apic_ids[i];
        uint64_t stack = frame_alloc_contig(BOOT_STACK_SIZE / PAGE_SIZE);
        if (!stack)
            panic("no memory for an AP stack");
        *tramp_var(&ap_tramp_pml4) = vm_kernel_pml4();
        *tramp_var(&ap_tramp_stack) = (uint64_t)P2V(stack) + BOOT_STACK_SIZE;
        *tramp_var(&ap_tramp_cpu) = (uint64_t)c;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        lapic_send_init_sipi(c->apic_id, AP_TRAMPOLINE >> 12);
        for (int t = 0; t < 2000 && !__atomic_load_n(&c->online, __ATOMIC_ACQUIRE); t++)
            udelay(1000);
        if (!c->online) {
            kprintf("nom: cpu with apic id %u did not come online\n", c->apic_id);
            continue;
        }
        ncpus++;
    }
}

_Noreturn void ap_main(struct cpu *c) {
    cpu_init_this(c);
    lapic_init_this();
    sched_init_cpu(c);
    __atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
    klock_acquire();
    sched_idle_loop();
}
