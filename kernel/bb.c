/* bb.c: the bulletin board (paper 3.5; DESIGN.md "The bulletin board"). Kernel-owned pages,
 * mapped read-only at NOM_BB_ADDR in every application. Only the kernel writes it, always
 * between bb_begin_write and bb_end_write (a seqlock: the generation is odd meanwhile). */
#include "defs.h"
#include "cpu.h"
#include "pci.h"
#include "seqlock.h"

static union {
    struct nom_bb bb;
    uint8_t pages[NOM_BB_PAGES * NOM_PAGE_SIZE];
} board __attribute__((aligned(4096)));

uint64_t bb_phys(void) { return KERNEL_V2P(&board); }

struct nom_bb *bb_begin_write(void) {
    seqlock_write_begin(&board.bb.generation);
    return &board.bb;
}

void bb_end_write(void) {
    seqlock_write_end(&board.bb.generation);
}

/* Fills the board from what boot found: CPUs, memory, PCI devices. */
void bb_init(void) {
    struct nom_bb *bb = bb_begin_write();
    bb->magic = NOM_BB_MAGIC;
    bb->abi_version = NOM_ABI_VERSION;
    bb->size = sizeof *bb;
    bb->tsc_hz = tsc_hz();
    bb->boot_tsc = rdtsc();
    bb->boot_unix_ns = rtc_unix_seconds() * 1000000000ull;
    bb->mem_total_bytes = frame_count_total() * PAGE_SIZE;
    bb->mem_free_bytes = frame_count_free() * PAGE_SIZE;
    bb->ncpus = ncpus;
    for (int i = 0; i < ncpus; i++)
        bb->cpus[i] = (struct nom_bb_cpu){.apic_id = cpus[i].apic_id, .online = cpus[i].online,
                                          .owner = NOM_NO_OWNER};
    bb->ndevices = pci_device_count();
    for (uint32_t i = 0; i < bb->ndevices; i++) {
        const struct pci_dev *d = pci_device(i);
        struct nom_bb_device *e = &bb->devices[i];
        e->bus = d->bus, e->slot = d->slot, e->function = d->func;
        e->vendor = d->vendor, e->device = d->device;
        e->class_code = d->class_code, e->subclass = d->subclass;
        e->prog_if = d->prog_if, e->revision = d->revision;
        e->owner = NOM_NO_OWNER;
        e->state = NOM_DEV_FREE;
        for (int b = 0; b < NOM_PCI_BARS; b++) {
            e->bar_base[b] = d->bar_base[b];
            e->bar_size[b] = d->bar_size[b];
            e->bar_kind[b] = d->bar_kind[b];
        }
    }
    bb_end_write();
}

/* One `bb:` line per resource at boot (the tests and tools read them). */
void bb_log_all(void) {
    const struct nom_bb *bb = &board.bb;
    kprintf("bb: abi %u generation %lu tsc_hz %lu boot_unix %lu\n", bb->abi_version, bb->generation,
            bb->tsc_hz, bb->boot_unix_ns / 1000000000u);
    for (uint32_t i = 0; i < bb->ncpus; i++)
        kprintf("bb: cpu %u apic %u %s\n", i, bb->cpus[i].apic_id,
                bb->cpus[i].online ? "online" : "offline");
    kprintf("bb: memory total %lu KiB free %lu KiB\n", bb->mem_total_bytes >> 10,
            bb->mem_free_bytes >> 10);
    for (uint32_t i = 0; i < bb->ndevices; i++) {
        const struct nom_bb_device *d = &bb->devices[i];
        char bars[160] = "";
        int n = 0;
        for (int b = 0; b < NOM_PCI_BARS; b++)
            if (d->bar_kind[b] && n < (int)sizeof bars)
                n += snprintf(bars + n, sizeof bars - n, " bar%d=%s:%lx+%lx", b,
                              d->bar_kind[b] == NOM_BAR_IO ? "io" : "mem", d->bar_base[b],
                              d->bar_size[b]);
        kprintf("bb: pci %u %02x:%02x.%x %04x:%04x class %02x.%02x%s\n", i, d->bus, d->slot,
                d->function, d->vendor, d->device, d->class_code, d->subclass, bars);
    }
    kprintf("bb: prices %d slots (empty)\n", NOM_BB_MAX_PRICES);
}
