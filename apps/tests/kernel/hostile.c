/* hostile: a device owner and memory user that attacks the kernel (issue 14). Each mode tries
 * one attack and prints what the kernel answered; the tests (kernel/tests/test_hostile.py) check
 * that the attack failed and that the kernel and a neighbour (witness) kept running.
 * argv[1]:
 *   msix      writes an exception vector into its NIC's MSI-X table (must page-fault: the
 *             table's pages are the kernel's)
 *   zombie    leaves its NIC running (DRIVER_OK) and exits without a reset
 *   inherit   waits for the zombie to end, acquires the NIC, reads the status it got
 *   config    config-space writes an owner must not make; acquiring bridges
 *   cfgread   100 config reads must not move the bulletin board's generation
 *   hog       maps memory until -ENOMEM, then asks the kernel for more work
 *   irqcycle  40 rounds of acquire, irq_attach, release
 *   notify    notifies another application without the nom.notify flag
 *   bigwalk   mem_map/mem_unmap/mem_protect over 2^24 pages, many times
 *   tlb       a second core reads a page while the first unmaps it
 *   iomap     a second core reads its NIC's I/O port while the first releases the NIC
 *   ac        sets EFLAGS.AC (which would switch SMAP off in ring 0) and keeps calling */
#include "virtio_min.h"

static int find_nic(int want_io) {
    for (uint32_t i = 0; i < BB->ndevices; i++)
        if (is_virtio_net(&BB->devices[i]) && (!want_io || BB->devices[i].bar_kind[0] == NOM_BAR_IO))
            return (int)i;
    return -1;
}

static int acquire_nic(struct vdev *v, int want_io) {
    int i = find_nic(want_io);
    kt_memset(v, 0, sizeof *v);
    if (i < 0 || SYS(NOM_SYS_DEVICE_ACQUIRE, i, &v->grant) < 0) {
        kt_printf("hostile: no NIC\n");
        kt_exit(2);
    }
    v->index = (uint32_t)i;
    return i;
}

static uint32_t cfg_read(uint32_t dev, uint32_t off, uint32_t size) {
    return (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, dev, off, size);
}

/* Config offset of the first capability with this id (and virtio cfg_type, if type >= 0). */
static uint32_t find_cap(uint32_t dev, uint32_t id, int type) {
    uint32_t off = cfg_read(dev, 0x34, 1) & 0xfc;
    for (int guard = 0; off && guard < 48; guard++) {
        if (cfg_read(dev, off, 1) == id && (type < 0 || cfg_read(dev, off + 3, 1) == (uint32_t)type))
            return off;
        off = cfg_read(dev, off + 1, 1) & 0xfc;
    }
    return 0;
}

static void attack_msix(void) {
    struct vdev v;
    acquire_nic(&v, 0);
    uint32_t cap = find_cap(v.index, 0x11, -1), table = cfg_read(v.index, cap + 4, 4);
    volatile uint32_t *entry = (volatile uint32_t *)(v.grant.bar_addr[table & 7] + (table & ~7u));
    kt_printf("hostile-msix: table at %lx\n", (uint64_t)entry);
    entry[2] = 14; /* message data: vector 14, a page fault the CPU would not push an error for */
    entry[3] = 0;  /* unmasked */
    kt_printf("hostile-msix: wrote the MSI-X table\n");
}

static void virtio_start(struct vdev *v) {
    volatile uint8_t *c = v->common;
    c[20] = 0;
    while (c[20]) ;
    c[20] = 1 | 2;
    *(volatile uint32_t *)(c + 8) = 1;
    *(volatile uint32_t *)(c + 12) = 1; /* VIRTIO_F_VERSION_1 */
    c[20] = 1 | 2 | 8;
    c[20] = 1 | 2 | 8 | 4;              /* DRIVER_OK */
}

static void attack_zombie(void) {
    struct vdev v;
    acquire_nic(&v, 0);
    if (vdev_map(&v) < 0)
        kt_exit(2);
    virtio_start(&v);
    kt_printf("hostile-zombie: left the NIC with status %u\n", v.common[20]);
}

static void inherit(void) {
    uint64_t deadline = kt_rdtsc() + kt_tsc_hz() * 120;
    while (BB->apps[0].state == NOM_APP_RUNNING && kt_rdtsc() < deadline)
        kt_sleep_ms(50);
    struct vdev v;
    acquire_nic(&v, 0);
    if (vdev_map(&v) < 0)
        kt_exit(2);
    uint32_t cmd = cfg_read(v.index, 4, 2);
    kt_printf("hostile-inherit: status %u bus master %u\n", v.common[20], (cmd >> 2) & 1);
}

static void attack_config(void) {
    struct vdev v;
    int i = acquire_nic(&v, 0);
    uint32_t msix = find_cap(v.index, 0x11, -1), window = find_cap(v.index, 0x09, 5);
    uint32_t cmd = cfg_read(v.index, 4, 2);
    int64_t bar = SYS(NOM_SYS_PCI_CONFIG_WRITE, i, 0x10, 4, 0xfee00000u);
    int64_t msixctl = SYS(NOM_SYS_PCI_CONFIG_WRITE, i, msix + 2, 2, 0x8000);
    int64_t win = window ? SYS(NOM_SYS_PCI_CONFIG_WRITE, i, window + 4, 1, 1) : -99;
    int64_t serr = SYS(NOM_SYS_PCI_CONFIG_WRITE, i, 4, 2, cmd ^ 0x100); /* SERR# enable */
    int64_t wide = SYS(NOM_SYS_PCI_CONFIG_WRITE, i, 4, 4, cmd);
    int64_t off = SYS(NOM_SYS_PCI_CONFIG_WRITE, i, 4, 2, cmd & ~4u);
    int64_t on = SYS(NOM_SYS_PCI_CONFIG_WRITE, i, 4, 2, cmd);
    kt_printf("hostile-config: bar %ld msix %ld window %ld serr %ld wide %ld master off %ld on %ld\n",
              bar, msixctl, win, serr, wide, off, on);
    int bridges = 0, refused = 0;
    for (uint32_t d = 0; d < BB->ndevices; d++) {
        if (is_virtio_net(&BB->devices[d]))
            continue;
        struct nom_device_grant g;
        int64_t r = SYS(NOM_SYS_DEVICE_ACQUIRE, d, &g);
        bridges += BB->devices[d].class_code == 0x06;
        refused += r == -NOM_EPERM;
    }
    kt_printf("hostile-config: %u other devices (%d bridges), %d acquires refused\n",
              BB->ndevices - 1, bridges, refused);
}

static void cfgread(void) {
    struct vdev v;
    acquire_nic(&v, 0);
    uint64_t before = BB->generation;
    for (int k = 0; k < 100; k++)
        cfg_read(v.index, 0, 4);
    kt_printf("hostile-cfgread: 100 reads moved the generation by %lu\n", BB->generation - before);
}

static uint32_t my_id;

static void hog(void) {
    uint64_t va = 0x100000000ull, pages = 0;
    int64_t r;
    while ((r = SYS(NOM_SYS_MEM_MAP, va, 64, NOM_MAP_READ | NOM_MAP_WRITE)) == 0)
        va += 64 * 4096, pages += 64;
    while ((r = SYS(NOM_SYS_MEM_MAP, va, 1, NOM_MAP_READ | NOM_MAP_WRITE)) == 0)
        va += 4096, pages++;
    struct nom_bb bb;
    kt_bb_snapshot(&bb);
    uint32_t me = my_id - 1;
    struct vdev v;
    int64_t contig = SYS(NOM_SYS_MEM_MAP, 0x300000000ull, 16, NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_CONTIG);
    int64_t acq = SYS(NOM_SYS_DEVICE_ACQUIRE, find_nic(0), &v.grant);
    int64_t irq = acq == 0 ? SYS(NOM_SYS_IRQ_ATTACH, find_nic(0), 0, 1) : acq;
    kt_printf("hostile-hog: mapped %lu pages then %ld, limit %u pages, free %lu KiB; contig %ld acquire %ld irq %ld\n",
              pages, r, bb.apps[me].mem_limit_pages, bb.mem_free_bytes >> 10, contig, acq, irq);
}

static void irqcycle(void) {
    int ok = 0;
    for (int k = 0; k < 40; k++) {
        struct vdev v;
        int i = acquire_nic(&v, 0);
        ok += SYS(NOM_SYS_IRQ_ATTACH, i, 0, k) == 0;
        SYS(NOM_SYS_DEVICE_RELEASE, i);
    }
    kt_printf("hostile-irqcycle: %d of 40 attaches succeeded\n", ok);
}

static void notify(void) {
    int64_t other = SYS(NOM_SYS_NOTIFY, my_id == 1 ? 2 : 1, 0x100);
    int64_t self = SYS(NOM_SYS_NOTIFY, my_id, 0x100);
    kt_printf("hostile-notify: other %ld self %ld\n", other, self);
}

static void bigwalk(void) {
    int64_t u = 0, m = 0, p = 0;
    for (int k = 0; k < 20; k++) {
        u = SYS(NOM_SYS_MEM_UNMAP, 0x10000000000ull, 1ull << 24);
        m = SYS(NOM_SYS_MEM_MAP, 0x10000000000ull, 1ull << 24, NOM_MAP_READ);
        p = SYS(NOM_SYS_MEM_PROTECT, 0x10000000000ull, 1ull << 24, NOM_MAP_READ);
    }
    kt_printf("hostile-bigwalk: 20 rounds over 2^24 pages: unmap %ld map %ld protect %ld\n", u, m, p);
}

static volatile uint64_t shared_go, shared_done, second_ready;
static uint8_t second_stack[16384] __attribute__((aligned(16)));

/* Reads *arg until the first core says it took the page away; a read after that must fault. */
void second_reader(uint64_t arg) {
    volatile uint64_t *page = (volatile uint64_t *)arg;
    uint64_t sum = 0;
    for (;;) {
        uint64_t done = shared_done;
        sum += *page;
        second_ready = 1;
        if (done) {
            kt_printf("hostile-tlb: read %lu after the unmap returned\n", sum);
            kt_exit(1);
        }
    }
}

static void tlb(void) {
    uint64_t va = 0x200000000ull;
    SYS(NOM_SYS_MEM_MAP, va, 1, NOM_MAP_READ | NOM_MAP_WRITE);
    *(volatile uint64_t *)va = 42;
    int64_t cpu = SYS(NOM_SYS_CORE_ACQUIRE, second_reader, second_stack + sizeof second_stack, va);
    while (!second_ready) ;
    int64_t r = SYS(NOM_SYS_MEM_UNMAP, va, 1);
    kt_printf("hostile-tlb: second core %ld, unmapped %ld\n", cpu, r);
    shared_done = 1;
    kt_sleep_ms(3000);
    kt_printf("hostile-tlb: second core kept reading\n");
}

void second_port_reader(uint64_t port) {
    for (;;) {
        uint64_t done = shared_done;
        uint8_t v;
        __asm__ volatile("inb %w1, %0" : "=a"(v) : "Nd"((uint16_t)port));
        second_ready = 1;
        if (done) {
            kt_printf("hostile-iomap: port %lx still open after the release (%u)\n", port, v);
            kt_exit(1);
        }
    }
}

static void iomap(void) {
    struct vdev v;
    int i = acquire_nic(&v, 1);
    uint64_t port = v.grant.bar_addr[0] + 18;
    int64_t cpu = SYS(NOM_SYS_CORE_ACQUIRE, second_port_reader, second_stack + sizeof second_stack, port);
    while (!second_ready) ;
    int64_t r = SYS(NOM_SYS_DEVICE_RELEASE, i);
    kt_printf("hostile-iomap: second core %ld, released %ld\n", cpu, r);
    shared_done = 1;
    kt_sleep_ms(3000);
    kt_printf("hostile-iomap: second core kept reading\n");
}

static void ac(void) {
    __asm__ volatile("pushfq; orq $0x40000, (%%rsp); popfq" ::: "memory", "cc");
    for (int k = 0; k < 20; k++)
        kt_sleep_ms(10); /* system calls and timer interrupts with AC set */
    uint64_t fl;
    __asm__ volatile("pushfq; popq %0" : "=r"(fl));
    kt_printf("hostile-ac: 20 sleeps with AC %lu\n", (fl >> 18) & 1);
}

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    my_id = info->app_id;
    const char *mode = argc > 1 ? argv[1] : "";
    static const struct { const char *name; void (*run)(void); } modes[] = {
        {"msix", attack_msix}, {"zombie", attack_zombie}, {"inherit", inherit},
        {"config", attack_config}, {"cfgread", cfgread}, {"hog", hog}, {"irqcycle", irqcycle},
        {"notify", notify}, {"bigwalk", bigwalk}, {"tlb", tlb}, {"iomap", iomap}, {"ac", ac},
    };
    for (unsigned k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        if (!kt_strcmp(mode, modes[k].name)) {
            modes[k].run();
            return 0;
        }
    }
    kt_printf("hostile: unknown mode %s\n", mode);
    return 2;
}
