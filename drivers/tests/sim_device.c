/*
 * The simulated virtio-net device of the driver's host tests (see sim_device.h). Register
 * semantics follow virtio 1.1 spec 4.1.4.3 (common configuration) and 4.1.4.4 (notify);
 * ring handling follows 2.6 from the device's side.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "sim_device.h"

#define BAR 4
#define BAR_SIZE 0x4000
#define COMMON_AT 0x0000
#define ISR_AT 0x1000
#define DEVICE_AT 0x2000
#define NOTIFY_AT 0x3000
#define NOTIFY_MULT 4

static struct sim_queue *selq(struct sim *s)
{
    return s->qsel < s->numq ? &s->q[s->qsel] : NULL;
}

/* ---- PCI configuration space ---------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* A vendor capability (4.1.4) at `at`, linked to `next`. */
static void add_cap(struct sim *s, uint8_t at, uint8_t next, uint8_t type, uint32_t off,
                    uint32_t len)
{
    s->pci[at] = 0x09;
    s->pci[at + 1] = next;
    s->pci[at + 2] = type == VIRTIO_PCI_CAP_NOTIFY_CFG ? 20 : 16;
    s->pci[at + 3] = type;
    s->pci[at + 4] = BAR;
    put32(&s->pci[at + 8], off);
    put32(&s->pci[at + 12], len);
}

static void build_config_space(struct sim *s)
{
    put16(&s->pci[0x00], 0x1af4);
    put16(&s->pci[0x02], 0x1041);
    put16(&s->pci[0x06], 0x10); /* capability list */
    s->pci[0x34] = 0x40;
    s->pci[0x40] = 0x11; /* an MSI-X capability first, as QEMU has */
    s->pci[0x41] = 0x50;
    add_cap(s, 0x50, 0x60, VIRTIO_PCI_CAP_COMMON_CFG, COMMON_AT, 0x1000);
    add_cap(s, 0x60, 0x70, VIRTIO_PCI_CAP_ISR_CFG, ISR_AT, 0x1000);
    add_cap(s, 0x70, 0x80, VIRTIO_PCI_CAP_DEVICE_CFG, DEVICE_AT, 0x1000);
    add_cap(s, 0x80, 0x00, VIRTIO_PCI_CAP_NOTIFY_CFG, NOTIFY_AT, 0x1000);
    put32(&s->pci[0x80 + 16], NOTIFY_MULT);
}

static uint32_t pci_read(void *ctx, uint32_t off, uint32_t size)
{
    struct sim *s = ctx;
    uint32_t v = 0;
    if (off + size <= sizeof s->pci)
        memcpy(&v, &s->pci[off], size);
    return v;
}

static uint64_t bar_size(void *ctx, uint32_t bar)
{
    (void)ctx;
    return bar == BAR ? BAR_SIZE : 0;
}

/* ---- registers ------------------------------------------------------------------------ */

static void reset(struct sim *s)
{
    s->resets++;
    if (s->stuck_reset)
        return;
    s->status = 0;
    s->accepted = 0;
    s->msix_config = VIRTIO_MSI_NO_VECTOR;
    for (int i = 0; i < 2; i++) {
        uint16_t max = s->q[i].max;
        unsigned notifies = s->q[i].notifies, interrupts = s->q[i].interrupts;
        s->q[i] = (struct sim_queue){ .max = max, .size = max, .msix = VIRTIO_MSI_NO_VECTOR,
                                      .notifies = notifies, .interrupts = interrupts };
    }
}

/* FEATURES_OK sticks only if the driver accepted nothing the device did not offer (3.1.1). */
static void write_status(struct sim *s, uint8_t v)
{
    if (v == 0) {
        reset(s);
        return;
    }
    if ((v & VIRTIO_CONFIG_S_FEATURES_OK) && (s->accepted & ~s->offered))
        v &= (uint8_t)~VIRTIO_CONFIG_S_FEATURES_OK;
    s->status = v;
}

static uint32_t common_read(struct sim *s, uint64_t off)
{
    struct sim_queue *q = selq(s);
    switch (off) {
    case VIRTIO_PCI_COMMON_DF: return (uint32_t)(s->offered >> (s->dfsel ? 32 : 0));
    case VIRTIO_PCI_COMMON_MSIX: return s->msix_config;
    case VIRTIO_PCI_COMMON_NUMQ: return s->numq;
    case VIRTIO_PCI_COMMON_STATUS: return s->stuck_reset ? 0x1 : s->status;
    case VIRTIO_PCI_COMMON_CFGGENERATION: return 0;
    case VIRTIO_PCI_COMMON_Q_SELECT: return s->qsel;
    case VIRTIO_PCI_COMMON_Q_SIZE: return q ? q->size : 0;
    case VIRTIO_PCI_COMMON_Q_MSIX: return q ? q->msix : VIRTIO_MSI_NO_VECTOR;
    case VIRTIO_PCI_COMMON_Q_ENABLE: return q ? q->enabled : 0;
    case VIRTIO_PCI_COMMON_Q_NOFF: return s->qsel;
    default: return 0;
    }
}

static void set_half(uint64_t *field, bool hi, uint32_t v)
{
    *field = hi ? (*field & 0xffffffffull) | (uint64_t)v << 32
                : (*field & ~0xffffffffull) | v;
}

static void queue_write(struct sim *s, struct sim_queue *q, uint64_t off, uint32_t v)
{
    switch (off) {
    case VIRTIO_PCI_COMMON_Q_SIZE: if (v && v <= q->max) q->size = (uint16_t)v; break;
    case VIRTIO_PCI_COMMON_Q_MSIX:
        q->msix = v < s->msix_entries ? (uint16_t)v : VIRTIO_MSI_NO_VECTOR;
        break;
    case VIRTIO_PCI_COMMON_Q_ENABLE: q->enabled = (uint16_t)v; break;
    case VIRTIO_PCI_COMMON_Q_DESCLO: case VIRTIO_PCI_COMMON_Q_DESCHI:
        set_half(&q->desc, off == VIRTIO_PCI_COMMON_Q_DESCHI, v);
        break;
    case VIRTIO_PCI_COMMON_Q_AVAILLO: case VIRTIO_PCI_COMMON_Q_AVAILHI:
        set_half(&q->avail, off == VIRTIO_PCI_COMMON_Q_AVAILHI, v);
        break;
    case VIRTIO_PCI_COMMON_Q_USEDLO: case VIRTIO_PCI_COMMON_Q_USEDHI:
        set_half(&q->used, off == VIRTIO_PCI_COMMON_Q_USEDHI, v);
        break;
    }
}

static void common_write(struct sim *s, uint64_t off, uint32_t v)
{
    switch (off) {
    case VIRTIO_PCI_COMMON_DFSELECT: s->dfsel = v; break;
    case VIRTIO_PCI_COMMON_GFSELECT: s->gfsel = v; break;
    case VIRTIO_PCI_COMMON_GF: set_half(&s->accepted, s->gfsel == 1, v); break;
    case VIRTIO_PCI_COMMON_MSIX: s->msix_config = (uint16_t)v; break;
    case VIRTIO_PCI_COMMON_STATUS: write_status(s, (uint8_t)v); break;
    case VIRTIO_PCI_COMMON_Q_SELECT: s->qsel = (uint16_t)v; break;
    default:
        if (selq(s))
            queue_write(s, selq(s), off, v);
    }
}

static uint32_t device_read(struct sim *s, uint64_t off, uint32_t size)
{
    uint8_t cfg[8];
    memcpy(cfg, s->mac, 6);
    memcpy(cfg + 6, &s->net_status, 2);
    uint32_t v = 0;
    if (off + size <= sizeof cfg)
        memcpy(&v, cfg + off, size);
    return v;
}

static uint32_t bar_read(void *ctx, uint32_t bar, uint64_t off, uint32_t size)
{
    struct sim *s = ctx;
    (void)size;
    if (bar != BAR)
        return 0xffffffffu;
    if (off >= DEVICE_AT && off < DEVICE_AT + 0x1000)
        return device_read(s, off - DEVICE_AT, size);
    return off < ISR_AT ? common_read(s, off - COMMON_AT) : 0;
}

static void bar_write(void *ctx, uint32_t bar, uint64_t off, uint32_t size, uint32_t value)
{
    struct sim *s = ctx;
    (void)size;
    if (bar != BAR)
        return;
    if (off < ISR_AT)
        common_write(s, off - COMMON_AT, value);
    else if (off >= NOTIFY_AT && off < NOTIFY_AT + 0x1000 && value < s->numq
             && off == NOTIFY_AT + (uint64_t)value * NOTIFY_MULT)
        s->q[value].notifies++;
}

/* ---- platform services ---------------------------------------------------------------- */

static void *dma_alloc(void *ctx, size_t size, uint64_t *phys)
{
    struct sim *s = ctx;
    size_t rounded = (size + 4095) & ~(size_t)4095;
    void *p = aligned_alloc(4096, rounded);
    if (!p)
        return NULL;
    memset(p, 0, rounded);
    s->live_allocs++;
    *phys = (uint64_t)(uintptr_t)p;
    return p;
}

static void dma_free(void *ctx, void *mem, size_t size)
{
    struct sim *s = ctx;
    (void)size;
    s->live_allocs--;
    free(mem);
}

static uint64_t tsc(void *ctx)
{
    return ((struct sim *)ctx)->now;
}

static int irq_attach(void *ctx, uint32_t entry)
{
    struct sim *s = ctx;
    return entry < s->msix_entries ? 0 : -1;
}

void sim_init(struct sim *s, uint16_t qmax)
{
    *s = (struct sim){
        .offered = 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_NET_F_MAC
                   | 1ull << VIRTIO_NET_F_STATUS | 1ull << VIRTIO_RING_F_EVENT_IDX
                   | 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_GUEST_CSUM
                   | 1ull << VIRTIO_NET_F_MRG_RXBUF
                   | 1ull << VIRTIO_NET_F_GUEST_TSO4 | 1ull << VIRTIO_NET_F_CTRL_VQ,
        .msix_entries = 2, .numq = 3, /* rx, tx, control */
        .mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 },
        .net_status = VIRTIO_NET_S_LINK_UP,
        .now = 1000000, .notify_on_drain = true,
        .plat = { .pci_read = pci_read, .bar_size = bar_size, .bar_read = bar_read,
                  .bar_write = bar_write, .dma_alloc = dma_alloc, .dma_free = dma_free,
                  .tsc = tsc, .tsc_hz = SIM_TSC_HZ, .irq_attach = irq_attach },
    };
    s->plat.ctx = s;
    s->q[0].max = s->q[1].max = qmax;
    build_config_space(s);
    reset(s);
    s->resets = 0;
}

void sim_no_irq(struct sim *s)
{
    s->plat.irq_attach = NULL;
}

void sim_advance_us(struct sim *s, uint64_t us)
{
    s->now += us * (SIM_TSC_HZ / 1000000);
}

bool sim_event_idx(const struct sim *s)
{
    return s->accepted >> VIRTIO_RING_F_EVENT_IDX & 1;
}

/* ---- the device side of the rings ----------------------------------------------------- */

static struct vring_avail *avail(const struct sim *s, int qi)
{
    return (struct vring_avail *)(uintptr_t)s->q[qi].avail;
}

static struct vring_used *used(const struct sim *s, int qi)
{
    return (struct vring_used *)(uintptr_t)s->q[qi].used;
}

uint16_t sim_avail_idx(const struct sim *s, int qi)
{
    return avail(s, qi)->idx;
}

uint16_t sim_avail_count(const struct sim *s, int qi)
{
    return (uint16_t)(avail(s, qi)->idx - s->q[qi].last_avail);
}

uint16_t sim_used_event(const struct sim *s, int qi)
{
    return avail(s, qi)->ring[s->q[qi].size];
}

/* With EVENT_IDX the device asks to be notified of the next entry by writing avail_event
 * (2.6.8); without it, by leaving VRING_USED_F_NO_NOTIFY clear. */
bool sim_take(struct sim *s, int qi, uint16_t *id)
{
    struct sim_queue *q = &s->q[qi];
    if (!sim_avail_count(s, qi))
        return false;
    *id = avail(s, qi)->ring[q->last_avail % q->size];
    q->last_avail++;
    if (s->notify_on_drain && sim_event_idx(s))
        *(uint16_t *)&used(s, qi)->ring[q->size] = q->last_avail;
    return true;
}

uint8_t *sim_buf(const struct sim *s, int qi, uint16_t id, uint32_t *len)
{
    struct vring_desc *d = (struct vring_desc *)(uintptr_t)s->q[qi].desc + id;
    *len = d->len;
    return (uint8_t *)(uintptr_t)d->addr;
}

/* Interrupt decision of 2.6.7.2 (EVENT_IDX) or 2.6.7.1 (flags), only with a vector. */
static void maybe_interrupt(struct sim *s, int qi, uint16_t old, uint16_t new)
{
    struct sim_queue *q = &s->q[qi];
    bool want = sim_event_idx(s) ? vring_need_event(sim_used_event(s, qi), new, old)
                                 : !(avail(s, qi)->flags & VRING_AVAIL_F_NO_INTERRUPT);
    if (want && q->msix != VIRTIO_MSI_NO_VECTOR)
        q->interrupts++;
}

void sim_used(struct sim *s, int qi, uint32_t id, uint32_t len)
{
    struct sim_queue *q = &s->q[qi];
    struct vring_used *u = used(s, qi);
    u->ring[q->used_idx % q->size] = (struct vring_used_elem){ .id = id, .len = len };
    uint16_t old = q->used_idx++;
    u->idx = q->used_idx;
    maybe_interrupt(s, qi, old, q->used_idx);
}

void sim_set_used_idx(struct sim *s, int qi, uint16_t idx)
{
    s->q[qi].used_idx = idx;
    used(s, qi)->idx = idx;
}

bool sim_rx_frame(struct sim *s, const void *frame, uint32_t len)
{
    uint16_t id;
    uint32_t cap;
    if (!sim_take(s, SIM_RXQ, &id))
        return false;
    uint8_t *buf = sim_buf(s, SIM_RXQ, id, &cap);
    struct virtio_net_hdr_v1 hdr = { .flags = s->rx_hdr_flags, .num_buffers = 1 };
    memcpy(buf, &hdr, sizeof hdr);
    memcpy(buf + sizeof hdr, frame, len);
    sim_used(s, SIM_RXQ, id, (uint32_t)sizeof hdr + len);
    return true;
}

unsigned sim_tx_drain(struct sim *s, uint8_t (*out)[2048], uint32_t *lens, unsigned max)
{
    unsigned n = 0;
    uint16_t id;
    while (n < max && sim_take(s, SIM_TXQ, &id)) {
        uint32_t len;
        uint8_t *buf = sim_buf(s, SIM_TXQ, id, &len);
        uint32_t hdr = sizeof(struct virtio_net_hdr_v1);
        lens[n] = len - hdr;
        memcpy(out[n], buf + hdr, len - hdr);
        sim_used(s, SIM_TXQ, id, 0);
        n++;
    }
    return n;
}
