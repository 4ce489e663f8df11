/*
 * vnet_smoke: the virtio-net driver against QEMU's real device, beneath libnom. A kernel-test
 * application (the runtime of apps/tests/kernel: raw system calls only) that opens the first
 * free virtio-net NIC poll-only, answers ARP and UDP echo on port 7 with apps/rawecho/proto.c,
 * and on a UDP datagram to port 7001 prints the driver's counters, resets and releases the NIC
 * and exits 0. argv[1] is the batching delay W in µs (default 0).
 */
#include "ktest.h"

#include "proto.h"
#include "virtio_net.h"

#define DMA_BASE 0x40000000ull /* trusted-mode DMA pages (abi.h: below the device window) */

static uint32_t bb_index;
static struct nom_device_grant grant;
static uint64_t dma_next = DMA_BASE;
static struct proto_addr me = { .ip = { 10, 0, 2, 15 } };
static struct vnet *dev;
static int stop;

/* ---- the platform: raw system calls ----------------------------------------------------- */

static uint32_t pci_read(void *ctx, uint32_t off, uint32_t size)
{
    (void)ctx;
    int64_t v = SYS(NOM_SYS_PCI_CONFIG_READ, bb_index, off, size);
    return v < 0 ? 0xffffffffu : (uint32_t)v;
}

static uint64_t bar_size(void *ctx, uint32_t bar)
{
    (void)ctx;
    return bar < NOM_PCI_BARS && grant.bar_kind[bar] == NOM_BAR_MEM ? grant.bar_size[bar] : 0;
}

static uint32_t bar_read(void *ctx, uint32_t bar, uint64_t off, uint32_t size)
{
    (void)ctx;
    uintptr_t at = grant.bar_addr[bar] + off;
    return size == 1 ? *(volatile uint8_t *)at
         : size == 2 ? *(volatile uint16_t *)at : *(volatile uint32_t *)at;
}

static void bar_write(void *ctx, uint32_t bar, uint64_t off, uint32_t size, uint32_t v)
{
    (void)ctx;
    uintptr_t at = grant.bar_addr[bar] + off;
    if (size == 1)
        *(volatile uint8_t *)at = (uint8_t)v;
    else if (size == 2)
        *(volatile uint16_t *)at = (uint16_t)v;
    else
        *(volatile uint32_t *)at = v;
}

/* Bump allocation of contiguous pages, one unmapped guard page between blocks. */
static void *dma_alloc(void *ctx, size_t size, uint64_t *phys)
{
    (void)ctx;
    uint64_t pages = (size + 4095) / 4096, va = dma_next;
    if (SYS(NOM_SYS_MEM_MAP, va, pages, NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_CONTIG) < 0)
        return NULL;
    dma_next += (pages + 1) * 4096;
    *phys = (uint64_t)SYS(NOM_SYS_VIRT_TO_PHYS, va);
    return (void *)va;
}

static void dma_free(void *ctx, void *mem, size_t size)
{
    (void)ctx;
    SYS(NOM_SYS_MEM_UNMAP, mem, (size + 4095) / 4096);
}

static uint64_t tsc(void *ctx)
{
    (void)ctx;
    return kt_rdtsc();
}

/* ---- answering -------------------------------------------------------------------------- */

static void send(const uint8_t *frame, size_t len)
{
    struct vnet_iov iov = { frame, len };
    if (len)
        vnet_tx_enqueue(dev, &iov, 1);
}

static void on_frames(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    static uint8_t out[PROTO_FRAME_MAX];
    (void)arg;
    for (unsigned i = 0; i < count; i++) {
        const uint8_t *in = frames[i].data;
        size_t len = frames[i].len;
        struct proto_udp u;
        if (!proto_udp_view(&me, in, len, &u))
            send(out, proto_arp_reply(&me, in, len, out));
        else if (u.dst_port == 7)
            send(out, proto_udp_echo(in, len, out));
        else
            stop = 1;
    }
    vnet_tx_commit(dev);
}

static void print_stats(void)
{
    struct vnet_stats s;
    vnet_stats(dev, &s);
    kt_printf("vnet_smoke: stats rx_packets %lu rx_batches %lu tx_packets %lu tx_batches %lu "
              "tx_kicks %lu rx_kicks %lu kicks_suppressed %lu polls %lu empty_polls %lu "
              "arms %lu rx_bad %lu tx_bad %lu tx_ring_full %lu\n",
              s.rx_packets, s.rx_batches, s.tx_packets, s.tx_batches, s.tx_kicks, s.rx_kicks,
              s.kicks_suppressed, s.polls, s.empty_polls, s.arms, s.rx_bad, s.tx_bad,
              s.tx_ring_full);
}

static int find_nic(void)
{
    static struct nom_bb bb;
    kt_bb_snapshot(&bb);
    for (uint32_t i = 0; i < bb.ndevices; i++)
        if (bb.devices[i].vendor == 0x1af4 && bb.devices[i].device == 0x1041
            && bb.devices[i].state == NOM_DEV_FREE)
            return (int)i;
    return -1;
}

static uint32_t parse_u32(const char *s)
{
    uint32_t v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (uint32_t)(*s++ - '0');
    return v;
}

int ktest_main(int argc, char **argv, struct nom_start_info *info)
{
    (void)info;
    int nic = find_nic();
    if (nic < 0 || SYS(NOM_SYS_DEVICE_ACQUIRE, nic, &grant) < 0) {
        kt_printf("vnet_smoke: no free virtio-net NIC\n");
        return 1;
    }
    bb_index = (uint32_t)nic;
    struct vnet_platform plat = {
        .pci_read = pci_read, .bar_size = bar_size, .bar_read = bar_read,
        .bar_write = bar_write, .dma_alloc = dma_alloc, .dma_free = dma_free, .tsc = tsc,
        .tsc_hz = kt_tsc_hz(),
    };
    struct vnet_config cfg = { .batching_delay_us = argc > 1 ? parse_u32(argv[1]) : 0 };
    int err = vnet_open(&dev, &plat, &cfg);
    if (err) {
        kt_printf("vnet_smoke: vnet_open failed: %d\n", err);
        return 1;
    }
    vnet_mac(dev, me.mac);
    kt_printf("vnet_smoke: open nic %d features %lx mac %x:%x:%x:%x:%x:%x link %d W %u\n", nic,
              vnet_features(dev), me.mac[0], me.mac[1], me.mac[2], me.mac[3], me.mac[4],
              me.mac[5], vnet_link_up(dev), vnet_batching_delay_us(dev));
    while (!stop) {
        int n = vnet_poll(dev, on_frames, NULL);
        if (n < 0)
            break;
        if (n == 0 && vnet_arm(dev) == VNET_ARM_NO_IRQ) {
            uint64_t d = vnet_next_deadline(dev);
            SYS(NOM_SYS_BLOCK, d ? d : kt_rdtsc() + kt_tsc_hz() / 5000); /* 200 µs */
        }
    }
    print_stats();
    vnet_close(dev);
    SYS(NOM_SYS_DEVICE_RELEASE, bb_index);
    kt_printf("vnet_smoke: released\n");
    return 0;
}
