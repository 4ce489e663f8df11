/* msix: does an MSI-X interrupt of an owned NIC reach its application as an upcall? Sets up
 * the NIC's transmit queue (virtio 1.1, 3.1.1 and 2.6), attaches MSI-X entry 0 to it, sends one
 * frame and waits for the used-buffer interrupt to arrive as a NOM_UPCALL_IRQ. */
#include "virtio_min.h"

#define QSIZE 16
#define COOKIE 0xc0ffee

struct desc { uint64_t addr; uint32_t len; uint16_t flags, next; };

static uint8_t upcall_stack[8192] __attribute__((aligned(16)));
static struct nom_upcall_ctl ctl;
static volatile uint64_t got_type, got_cookie, upcalls;

/* Entered by the kernel with rdi = frame on the upcall stack; never returns normally. */
void on_upcall(struct nom_upcall_frame *f) {
    got_type = f->type;
    got_cookie = f->arg0;
    upcalls++;
    SYS(NOM_SYS_UPCALL_RETURN, f);
}

static void w8(volatile uint8_t *b, int off, uint8_t v) { *(volatile uint8_t *)(b + off) = v; }
static void w16(volatile uint8_t *b, int off, uint16_t v) { *(volatile uint16_t *)(b + off) = v; }
static void w32(volatile uint8_t *b, int off, uint32_t v) { *(volatile uint32_t *)(b + off) = v; }
static void w64(volatile uint8_t *b, int off, uint64_t v) { w32(b, off, (uint32_t)v); w32(b, off + 4, v >> 32); }
static uint8_t r8(volatile uint8_t *b, int off) { return *(volatile uint8_t *)(b + off); }
static uint16_t r16(volatile uint8_t *b, int off) { return *(volatile uint16_t *)(b + off); }

int ktest_main(int argc, char **argv, struct nom_start_info *info) {
    (void)argc, (void)argv, (void)info;
    struct vdev v = {0};
    uint32_t n = BB->ndevices, i;
    for (i = 0; i < n && !is_virtio_net(&BB->devices[i]); i++)
        ;
    if (i == n || SYS(NOM_SYS_DEVICE_ACQUIRE, i, &v.grant) < 0 || (v.index = i, vdev_map(&v) < 0)) {
        kt_printf("msix: no NIC\n");
        return 1;
    }
    volatile uint8_t *c = v.common;
    w8(c, 20, 0);                           /* reset */
    while (r8(c, 20)) ;
    w8(c, 20, 1 | 2);                       /* ACKNOWLEDGE | DRIVER */
    w32(c, 8, 0); w32(c, 12, 0);
    w32(c, 8, 1); w32(c, 12, 1);            /* VIRTIO_F_VERSION_1 (bit 32) only */
    w8(c, 20, 1 | 2 | 8);                   /* FEATURES_OK */
    if (!(r8(c, 20) & 8)) { kt_printf("msix: features refused\n"); return 1; }

    uint64_t ring_va = 0x20000000;          /* desc, avail, used, buffer: one page each */
    if (SYS(NOM_SYS_MEM_MAP, ring_va, 4, NOM_MAP_READ | NOM_MAP_WRITE | NOM_MAP_CONTIG) < 0) return 1;
    uint64_t ring_pa = (uint64_t)SYS(NOM_SYS_VIRT_TO_PHYS, ring_va);
    w16(c, 22, 1);                          /* queue 1: transmitq */
    w16(c, 24, QSIZE);
    w16(c, 26, 0);                          /* MSI-X entry 0 */
    if (r16(c, 26) != 0) { kt_printf("msix: device has no MSI-X vector for the queue\n"); return 1; }
    w64(c, 32, ring_pa);
    w64(c, 40, ring_pa + 4096);
    w64(c, 48, ring_pa + 8192);
    uint16_t notify_off = r16(c, 30);
    w16(c, 28, 1);                          /* queue_enable */
    w16(c, 16, 0xffff);                     /* no config-change vector */
    w8(c, 20, 1 | 2 | 8 | 4);               /* DRIVER_OK */

    SYS(NOM_SYS_UPCALL_REGISTER, on_upcall, upcall_stack + sizeof upcall_stack, &ctl);
    int64_t r = SYS(NOM_SYS_IRQ_ATTACH, i, 0, COOKIE);
    kt_printf("msix: irq_attach %ld, device has %u MSI-X entries\n", r, v.grant.msix_entries);

    struct desc *d = (struct desc *)ring_va;
    volatile uint16_t *avail = (volatile uint16_t *)(ring_va + 4096);
    volatile uint16_t *used_idx = (volatile uint16_t *)(ring_va + 8192 + 2);
    uint8_t *buf = (uint8_t *)(ring_va + 12288);
    kt_memset(buf + 12, 0xff, 6);           /* 12-byte virtio_net_hdr, then a broadcast frame */
    kt_memcpy(buf + 18, (const void *)v.device_cfg, 6);
    buf[24] = 0x88, buf[25] = 0xb5;         /* local experimental ethertype */
    d[0] = (struct desc){ring_pa + 12288, 12 + 60, 0, 0};
    avail[2] = 0;                           /* ring[0] = descriptor 0 */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    avail[1] = 1;                           /* idx */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w16(v.notify_base, notify_off * v.notify_mult, 1);

    uint64_t deadline = kt_rdtsc() + kt_tsc_hz() * 10;
    while (!upcalls && kt_rdtsc() < deadline)
        SYS(NOM_SYS_BLOCK, deadline);
    kt_printf("msix: upcalls %lu type %lu cookie %lx used idx %u\n", upcalls, got_type, got_cookie, *used_idx);
    w8(c, 20, 0);                           /* reset before release */
    return upcalls == 1 && got_type == NOM_UPCALL_IRQ && got_cookie == COOKIE ? 0 : 1;
}
