/* main.c: boot order. The kernel's three jobs (paper 3.2): initialize and boot, enumerate the
 * machine's resources onto the bulletin board, run the applications GRUB loaded as modules. */
#include "defs.h"
#include "cpu.h"

/* Where the kernel's share of the boot goes (issue 16's first answer): TSC stamps taken as it
 * goes, printed in microseconds once the LAPIC calibration knows the TSC's rate. */
enum { BOOT_MEMORY, BOOT_LAPIC, BOOT_CPUS, BOOT_DEVICES, BOOT_APPS, BOOT_STEPS };

static void print_boot_steps(const uint64_t *tsc) {
    static const char *const names[BOOT_STEPS] = {"memory", "lapic", "cpus", "devices", "apps"};
    kprintf("nom: kernel boot %lu us:", tsc_to_ns(tsc[BOOT_STEPS] - tsc[0]) / 1000);
    for (int i = 0; i < BOOT_STEPS; i++)
        kprintf(" %s %lu", names[i], tsc_to_ns(tsc[i + 1] - tsc[i]) / 1000);
    kprintf("\n");
}

void kmain(uint64_t mbi_phys) {
    static struct boot_info bi;
    static uint32_t apic_ids[MAX_CPUS];
    uint64_t tsc[BOOT_STEPS + 1];
    tsc[0] = rdtsc();
    cpus[0].index = 0;
    console_init();
    kprintf("nom: booting\n");
    cpu_init_boot();
    cpu_init_this(&cpus[0]);
    trap_init();
    multiboot_parse(mbi_phys, &bi);
    uint64_t max_phys = multiboot_max_phys(mbi_phys);
    frame_init(max_phys);
    multiboot_reserve_and_free_memory(mbi_phys, &bi);
    vm_init(max_phys);
    tsc[BOOT_MEMORY + 1] = rdtsc();
    uint64_t lapic_phys;
    int n = acpi_find_cpus(bi.rsdp_phys, apic_ids, MAX_CPUS, &lapic_phys);
    lapic_init_boot(lapic_phys);
    tsc[BOOT_LAPIC + 1] = rdtsc();
    cpus[0].apic_id = lapic_id();
    cpus[0].online = true;
    sched_init_cpu(&cpus[0]);
    smp_boot_aps(apic_ids, n);
    tsc[BOOT_CPUS + 1] = rdtsc();
    kprintf("nom: %d cpu%s online\n", ncpus, ncpus == 1 ? "" : "s");
    pci_init();
    iommu_init(bi.rsdp_phys);
    bb_init();
    bb_log_all();
    tsc[BOOT_DEVICES + 1] = rdtsc();
    klock_acquire();
    apps_start_modules(&bi);
    tsc[BOOT_APPS + 1] = rdtsc();
    print_boot_steps(tsc);
    sched_idle_loop();
}
