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
 *   lazytlb   a second core reads a page, then sleeps (its vCPU idles on this application's
 *             address space, kernel/sched.c switch_to) while the first unmaps it
 *   lazyexit  exits while its second core sleeps, so that the idle vCPU still holds the
 *             address space the kernel frees
 *   iomap     a second core reads its NIC's I/O port while the first releases the NIC
 *   ac        sets EFLAGS.AC (which would switch SMAP off in ring 0) and keeps calling
 *   dma       aims its NIC's DMA at the kernel's image and the bulletin board */
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

/* Starts fn(arg) on a second core and waits until it says it is ready; the core's number. */
static int64_t start_second(void (*fn)(uint64_t), uint64_t arg) {
    int64_t cpu = SYS(NOM_SYS_CORE_ACQUIRE, fn, second_stack + sizeof second_stack, arg);
    while (!second_ready)
        ;
    return cpu;
}

/* Maps a page, has reader use it on a second core, waits settle_ms, unmaps it and tells the
 * reader; the reader's next read must fault (the mode's name prefixes every line). */
static void unmap_under_reader(const char *mode, void (*reader)(uint64_t), uint64_t settle_ms) {
    uint64_t va = 0x200000000ull;
    SYS(NOM_SYS_MEM_MAP, va, 1, NOM_MAP_READ | NOM_MAP_WRITE);
    *(volatile uint64_t *)va = 42;
    int64_t cpu = start_second(reader, va);
    if (settle_ms)
        kt_sleep_ms(settle_ms);
    int64_t r = SYS(NOM_SYS_MEM_UNMAP, va, 1);
    kt_printf("hostile-%s: second core %ld, unmapped %ld\n", mode, cpu, r);
    shared_done = 1;
    kt_sleep_ms(3000);
    kt_printf("hostile-%s: second core kept reading\n", mode);
}

static void tlb(void) {
    unmap_under_reader("tlb", second_reader, 0);
}

/* Reads the page, sleeps in the kernel (this vCPU idles on the application's page tables)
 * until the first core has unmapped it, and reads again: that read must fault. */
void second_lazy_reader(uint64_t arg) {
    volatile uint64_t *page = (volatile uint64_t *)arg;
    uint64_t sum = *page;
    second_ready = 1;
    while (!shared_done)
        kt_sleep_ms(20);
    sum += *page;
    kt_printf("hostile-lazytlb: read %lu after the unmap returned\n", sum);
    kt_exit(1);
}

static void lazytlb(void) {
    unmap_under_reader("lazytlb", second_lazy_reader, 50); /* the reader sleeps in 20 ms blocks */
}

void second_sleeper(uint64_t arg) {
    (void)arg;
    second_ready = 1;
    for (;;)
        kt_sleep_ms(1000);
}

static void lazyexit(void) {
    int64_t cpu = start_second(second_sleeper, 0);
    kt_sleep_ms(50);
    kt_printf("hostile-lazyexit: second core %ld asleep, exiting\n", cpu);
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
    int64_t cpu = start_second(second_port_reader, port);
    int64_t r = SYS(NOM_SYS_DEVICE_RELEASE, i);
    kt_printf("hostile-iomap: second core %ld, released %ld\n", cpu, r);
    shared_done = 1;
    kt_sleep_ms(3000);
    kt_printf("hostile-iomap: second core kept reading\n");
}

/* dma: the device as a weapon (issue 14, IOMMU mode). A transmit descriptor points at the
 * kernel's image (physical 1 MiB: the device would read it onto the wire), and a receive
 * descriptor at the bulletin board's frame (the device would write the answer to our ARP
 * request over what only the kernel may write). With an IOMMU, both are refused. */
#define DMA_PAGES 0x200000000ull
#define KERNEL_IMAGE_PA ((uint64_t)0x100000)

struct dma_queue {
    volatile uint8_t *page; /* descriptors at 0, driver ring at 128, device ring at 256 */
    uint64_t phys;
    volatile uint16_t *notify;
};

static void queue_setup(struct vdev *v, struct dma_queue *q, uint16_t index) {
    volatile uint8_t *c = v->common;
    q->page = (volatile uint8_t *)(DMA_PAGES + index * 4096ull);
    q->phys = (uint64_t)SYS(NOM_SYS_VIRT_TO_PHYS, (uint64_t)q->page);
    *(volatile uint16_t *)(c + 0x16) = index;                     /* queue_select */
    *(volatile uint16_t *)(c + 0x18) = 8;                         /* queue_size */
    *(volatile uint64_t *)(c + 0x20) = q->phys;                   /* descriptors */
    *(volatile uint64_t *)(c + 0x28) = q->phys + 128;             /* driver ring */
    *(volatile uint64_t *)(c + 0x30) = q->phys + 256;             /* device ring */
    uint16_t off = *(volatile uint16_t *)(c + 0x1e);
    q->notify = (volatile uint16_t *)(v->notify_base + off * v->notify_mult);
    *(volatile uint16_t *)(c + 0x1c) = 1;                         /* queue_enable */
}

/* Descriptor 0 (addr, len, device-writable or not) made available and notified (2.7). */
static void queue_post(struct dma_queue *q, uint64_t addr, uint32_t len, int writable, uint16_t index) {
    *(volatile uint64_t *)(q->page + 0) = addr;
    *(volatile uint32_t *)(q->page + 8) = len;
    *(volatile uint16_t *)(q->page + 12) = writable ? 2 : 0;
    *(volatile uint16_t *)(q->page + 128 + 4) = 0;                /* ring[0] = descriptor 0 */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *(volatile uint16_t *)(q->page + 128 + 2) = 1;                /* idx */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *q->notify = index;
}

static uint16_t queue_used(const struct dma_queue *q) { return *(volatile uint16_t *)(q->page + 256 + 2); }

/* An ARP request for the user-mode network's gateway 10.0.2.2, from our own memory. */
static uint32_t arp_request(volatile uint8_t *buf, const volatile uint8_t *mac) {
    static const uint8_t head[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 8, 6,
                                   0, 1, 8, 0, 6, 4, 0, 1};
    for (int i = 0; i < 12; i++)
        buf[i] = 0; /* virtio_net_hdr_v1 (5.1.6): no offloads */
    volatile uint8_t *f = buf + 12;
    for (unsigned i = 0; i < sizeof head; i++)
        f[i] = head[i];
    for (int i = 0; i < 6; i++)
        f[6 + i] = f[22 + i] = mac[i];
    static const uint8_t tail[] = {10, 0, 2, 15, 0, 0, 0, 0, 0, 0, 10, 0, 2, 2};
    for (unsigned i = 0; i < sizeof tail; i++)
        f[28 + i] = tail[i];
    return 12 + 42;
}

static void attack_dma(void) {
    struct vdev v;
    acquire_nic(&v, 0);
    if (vdev_map(&v) < 0 || SYS(NOM_SYS_MEM_MAP, DMA_PAGES, 3, NOM_MAP_READ | NOM_MAP_WRITE) < 0)
        kt_exit(2);
    volatile uint8_t *c = v.common;
    c[20] = 0;
    while (c[20]) ;
    c[20] = 1 | 2;
    *(volatile uint32_t *)(c + 0) = 1;
    uint32_t hi = *(volatile uint32_t *)(c + 4);                  /* features 32-63 */
    *(volatile uint32_t *)(c + 8) = 1;
    *(volatile uint32_t *)(c + 12) = 1 | (hi & 2);                /* VERSION_1, ACCESS_PLATFORM */
    c[20] = 1 | 2 | 8;
    struct dma_queue rx, tx;
    queue_setup(&v, &rx, 0);
    queue_setup(&v, &tx, 1);
    c[20] = 1 | 2 | 8 | 4;                                        /* DRIVER_OK */
    uint64_t board = (uint64_t)SYS(NOM_SYS_VIRT_TO_PHYS, NOM_BB_ADDR);
    kt_printf("hostile-dma: kernel image at %lx, board at %lx\n", KERNEL_IMAGE_PA, board);
    queue_post(&tx, KERNEL_IMAGE_PA, 1514, 0, 1);
    kt_sleep_ms(500);
    uint16_t leaked = queue_used(&tx);
    queue_post(&rx, board, 1526, 1, 0);
    volatile uint8_t *frame = (volatile uint8_t *)(DMA_PAGES + 2 * 4096ull);
    uint32_t len = arp_request(frame, v.device_cfg);
    *(volatile uint16_t *)(tx.page + 128 + 4 + 2) = 1;           /* ring[1] = descriptor 1 */
    *(volatile uint64_t *)(tx.page + 16) = (uint64_t)SYS(NOM_SYS_VIRT_TO_PHYS, (uint64_t)frame);
    *(volatile uint32_t *)(tx.page + 24) = len;
    *(volatile uint16_t *)(tx.page + 28) = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *(volatile uint16_t *)(tx.page + 128 + 2) = 2;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *tx.notify = 1;
    kt_sleep_ms(1000);
    kt_printf("hostile-dma: tx used %u then %u, rx used %u, board intact %d, status %u\n",
              leaked, queue_used(&tx), queue_used(&rx),
              BB->magic == NOM_BB_MAGIC && BB->abi_version == NOM_ABI_VERSION, c[20]);
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
        {"notify", notify}, {"bigwalk", bigwalk}, {"tlb", tlb}, {"lazytlb", lazytlb},
        {"lazyexit", lazyexit}, {"iomap", iomap}, {"ac", ac}, {"dma", attack_dma},
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
