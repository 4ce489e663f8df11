/* main.c: boot order. The kernel's three jobs (paper 3.2): initialize and boot, enumerate the
 * machine's resources onto the bulletin board, run the applications GRUB loaded as modules. */
#include "defs.h"
#include "cpu.h"

void kmain(uint64_t mbi_phys) {
    static struct boot_info bi;
    static uint32_t apic_ids[MAX_CPUS];
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
    uint64_t lapic_phys;
    int n = acpi_find_cpus(bi.rsdp_phys, apic_ids, MAX_CPUS, &lapic_phys);
    lapic_init_boot(lapic_phys);
    cpus[0].apic_id = lapic_id();
    cpus[0].online = true;
    sched_init_cpu(&cpus[0]);
    smp_boot_aps(apic_ids, n);
    kprintf("nom: %d cpu%s online\n", ncpus, ncpus == 1 ? "" : "s");
    pci_init();
    iommu_init(bi.rsdp_phys);
    bb_init();
    bb_log_all();
    klock_acquire();
    apps_start_modules(&bi);
    sched_idle_loop();
}
