/* kick_guest: a multiboot guest that notifies ("kicks") a virtio-net device a known number of
 * times, so that the test can check the trace-event counter (tests/test_kick_count.py).
 *
 * 32-bit protected mode, no paging: physical addresses throughout. It finds the modern
 * virtio-net PCI function (1af4:1041) with PCI configuration mechanism #1 (ports CF8/CFC),
 * reads its common and notify capabilities (virtio 1.x, 4.1.4), points receive queue 0 at
 * zeroed memory and enables it (QEMU ignores kicks of a queue without rings), writes KICKS
 * notifications, then exits through isa-debug-exit with 0 (QEMU status 1). Failures exit
 * with 1 (no device) or 2 (its BAR is above 4 GiB).
 */
#include <stdint.h>

#define KICKS 1000

#define VIRTIO_PCI_CAP_COMMON_CFG 1
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2
/* virtio 1.x 4.1.4.3, struct virtio_pci_common_cfg offsets */
#define COMMON_STATUS 0x14
#define COMMON_Q_SELECT 0x16
#define COMMON_Q_ENABLE 0x1c
#define COMMON_Q_NOTIFY_OFF 0x1e
#define COMMON_Q_DESC 0x20
#define COMMON_Q_DRIVER 0x28
#define COMMON_Q_DEVICE 0x30

static uint8_t rings[3][4096] __attribute__((aligned(4096)));

static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint32_t inl(uint16_t port)
{
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static void exit_qemu(uint8_t code)
{
    __asm__ volatile("outb %0, $0xf4" :: "a"(code));
}

/* Configuration space of bus 0, device dev, function 0 (mechanism #1). */
static uint32_t pci_read(uint32_t dev, uint32_t off)
{
    outl(0xcf8, 0x80000000u | dev << 11 | (off & 0xfc));
    return inl(0xcfc);
}

static void pci_write(uint32_t dev, uint32_t off, uint32_t v)
{
    outl(0xcf8, 0x80000000u | dev << 11 | (off & 0xfc));
    outl(0xcfc, v);
}

static uint8_t pci_read8(uint32_t dev, uint32_t off)
{
    return (uint8_t)(pci_read(dev, off) >> (8 * (off & 3)));
}

/* The BAR's address; 0 when it lies above 4 GiB (unreachable without paging). */
static uint32_t bar_address(uint32_t dev, uint32_t bar)
{
    uint32_t lo = pci_read(dev, 0x10 + 4 * bar);
    if ((lo & 6) == 4 && pci_read(dev, 0x14 + 4 * bar) != 0)
        return 0;
    return lo & ~0xfu;
}

static volatile uint8_t *cap_region(uint32_t dev, uint32_t cap)
{
    uint32_t base = bar_address(dev, pci_read8(dev, cap + 4));
    return base ? (volatile uint8_t *)(base + pci_read(dev, cap + 8)) : 0;
}

void kick_main(void)
{
    uint32_t dev = 0;
    while (dev < 32 && pci_read(dev, 0) != 0x10411af4)  /* bus 0, function 0 */
        dev++;
    if (dev == 32)
        exit_qemu(1);
    pci_write(dev, 4, pci_read(dev, 4) | 0x6);  /* memory space + bus master */
    volatile uint8_t *common = 0, *notify = 0;
    uint32_t multiplier = 0;
    for (uint32_t cap = pci_read8(dev, 0x34); cap; cap = pci_read8(dev, cap + 1)) {
        if (pci_read8(dev, cap) != 0x09)  /* vendor-specific: virtio */
            continue;
        if (pci_read8(dev, cap + 3) == VIRTIO_PCI_CAP_COMMON_CFG)
            common = cap_region(dev, cap);
        if (pci_read8(dev, cap + 3) == VIRTIO_PCI_CAP_NOTIFY_CFG) {
            notify = cap_region(dev, cap);
            multiplier = pci_read(dev, cap + 16);
        }
    }
    if (!common || !notify)
        exit_qemu(2);
    common[COMMON_STATUS] = 0;      /* reset, then ACKNOWLEDGE | DRIVER (3.1.1) */
    common[COMMON_STATUS] = 3;
    *(volatile uint16_t *)(common + COMMON_Q_SELECT) = 0;
    *(volatile uint64_t *)(common + COMMON_Q_DESC) = (uint32_t)rings[0];
    *(volatile uint64_t *)(common + COMMON_Q_DRIVER) = (uint32_t)rings[1];
    *(volatile uint64_t *)(common + COMMON_Q_DEVICE) = (uint32_t)rings[2];
    *(volatile uint16_t *)(common + COMMON_Q_ENABLE) = 1;
    uint16_t off = *(volatile uint16_t *)(common + COMMON_Q_NOTIFY_OFF);
    volatile uint16_t *doorbell = (volatile uint16_t *)(notify + off * multiplier);
    for (int i = 0; i < KICKS; i++)
        *doorbell = 0;  /* 4.1.4.4: the queue's index */
    exit_qemu(0);
}
