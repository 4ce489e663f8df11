/*
 * The virtio 1.x modern PCI transport (virtio 1.1 spec 4.1): finds the common, notify, ISR and
 * device configuration structures through the vendor-specific PCI capabilities (4.1.4) and
 * accesses them through the platform's BAR accessors. QEMU's modern-only virtio-net-pci
 * (1af4:1041, disable-legacy=on) puts all four in BAR 4.
 */
#include "vnet_impl.h"

#define PCI_VENDOR_ID       0x00
#define PCI_DEVICE_ID       0x02
#define PCI_STATUS          0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_CAP_PTR         0x34
#define PCI_CAP_ID_VNDR     0x09
#define VIRTIO_PCI_VENDOR   0x1af4
#define VIRTIO_PCI_NET_MODERN 0x1041 /* 0x1040 + device type 1 (spec 4.1.2.1) */
#define VIRTIO_PCI_NET_TRANSITIONAL 0x1000
#define PCI_CAP_MAX_WALK    48       /* (256 - 64) / 4: a longer list loops */
#define RESET_POLL_LIMIT    1000000u

static uint32_t common_read(struct vpci *t, uint32_t off, uint32_t size)
{
    return t->p->bar_read(t->p->ctx, t->common.bar, t->common.off + off, size);
}

static void common_write(struct vpci *t, uint32_t off, uint32_t size, uint32_t v)
{
    t->p->bar_write(t->p->ctx, t->common.bar, t->common.off + off, size, v);
}

/* Records one virtio structure if its BAR is mapped and it lies inside it (4.1.4.1: the driver
 * MUST ignore a capability naming a reserved BAR). The first of each type wins (4.1.4). */
static void take_region(struct vpci *t, struct vpci_region *r, uint32_t cap)
{
    const struct vnet_platform *p = t->p;
    uint32_t bar = p->pci_read(p->ctx, cap + VIRTIO_PCI_CAP_BAR, 1);
    uint64_t off = p->pci_read(p->ctx, cap + VIRTIO_PCI_CAP_OFFSET, 4);
    uint64_t len = p->pci_read(p->ctx, cap + VIRTIO_PCI_CAP_LENGTH, 4);
    if (r->len || bar > 5 || len == 0 || off + len > p->bar_size(p->ctx, bar))
        return;
    *r = (struct vpci_region){ .bar = bar, .off = off, .len = len };
}

/* Walks the capability list (4.1.4) and keeps the structures the driver uses. */
static void walk_caps(struct vpci *t)
{
    const struct vnet_platform *p = t->p;
    uint32_t cap = p->pci_read(p->ctx, PCI_CAP_PTR, 1) & 0xfc;
    for (int n = 0; cap >= 0x40 && n < PCI_CAP_MAX_WALK; n++) {
        if (p->pci_read(p->ctx, cap, 1) == PCI_CAP_ID_VNDR) {
            switch (p->pci_read(p->ctx, cap + VIRTIO_PCI_CAP_CFG_TYPE, 1)) {
            case VIRTIO_PCI_CAP_COMMON_CFG: take_region(t, &t->common, cap); break;
            case VIRTIO_PCI_CAP_ISR_CFG: take_region(t, &t->isr, cap); break;
            case VIRTIO_PCI_CAP_DEVICE_CFG: take_region(t, &t->device, cap); break;
            case VIRTIO_PCI_CAP_NOTIFY_CFG:
                if (!t->notify.len)
                    t->notify_mult = p->pci_read(p->ctx, cap + 16, 4);
                take_region(t, &t->notify, cap);
                break;
            }
        }
        cap = p->pci_read(p->ctx, cap + 1, 1) & 0xfc;
    }
}

/* Checks that this is a virtio network device and finds its modern structures.
 * -VNET_ENODEV if it is not, or if a structure the driver needs is missing or too small. */
int vpci_find(struct vpci *t, const struct vnet_platform *p)
{
    *t = (struct vpci){ .p = p };
    uint32_t device = p->pci_read(p->ctx, PCI_DEVICE_ID, 2);
    if (p->pci_read(p->ctx, PCI_VENDOR_ID, 2) != VIRTIO_PCI_VENDOR
        || (device != VIRTIO_PCI_NET_MODERN && device != VIRTIO_PCI_NET_TRANSITIONAL)
        || !(p->pci_read(p->ctx, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST))
        return -VNET_ENODEV;
    walk_caps(t);
    if (t->common.len < VIRTIO_PCI_COMMON_Q_USEDHI + 4 || !t->notify.len
        || t->device.len < 8) /* mac[6] + status */
        return -VNET_ENODEV;
    return 0;
}

/* Resets the device and waits until it reads back 0 (4.1.4.3.2): after that it does no DMA
 * and raises no interrupt. -VNET_EIO if it never completes. */
int vpci_reset(struct vpci *t)
{
    common_write(t, VIRTIO_PCI_COMMON_STATUS, 1, 0);
    for (uint32_t i = 0; i < RESET_POLL_LIMIT; i++)
        if (common_read(t, VIRTIO_PCI_COMMON_STATUS, 1) == 0)
            return 0;
    return -VNET_EIO;
}

uint8_t vpci_status(struct vpci *t)
{
    return (uint8_t)common_read(t, VIRTIO_PCI_COMMON_STATUS, 1);
}

/* Sets status bits in the order of 3.1.1; the device may clear FEATURES_OK in reply. */
void vpci_add_status(struct vpci *t, uint8_t bits)
{
    common_write(t, VIRTIO_PCI_COMMON_STATUS, 1, vpci_status(t) | bits);
}

uint64_t vpci_device_features(struct vpci *t)
{
    common_write(t, VIRTIO_PCI_COMMON_DFSELECT, 4, 0);
    uint64_t lo = common_read(t, VIRTIO_PCI_COMMON_DF, 4);
    common_write(t, VIRTIO_PCI_COMMON_DFSELECT, 4, 1);
    uint64_t hi = common_read(t, VIRTIO_PCI_COMMON_DF, 4);
    return lo | hi << 32;
}

void vpci_set_driver_features(struct vpci *t, uint64_t features)
{
    common_write(t, VIRTIO_PCI_COMMON_GFSELECT, 4, 0);
    common_write(t, VIRTIO_PCI_COMMON_GF, 4, (uint32_t)features);
    common_write(t, VIRTIO_PCI_COMMON_GFSELECT, 4, 1);
    common_write(t, VIRTIO_PCI_COMMON_GF, 4, (uint32_t)(features >> 32));
}

/* The largest size the device accepts for queue qidx; 0 if the queue does not exist. */
uint16_t vpci_queue_max(struct vpci *t, uint16_t qidx)
{
    if (qidx >= common_read(t, VIRTIO_PCI_COMMON_NUMQ, 2))
        return 0;
    common_write(t, VIRTIO_PCI_COMMON_Q_SELECT, 2, qidx);
    return (uint16_t)common_read(t, VIRTIO_PCI_COMMON_Q_SIZE, 2);
}

static void write64(struct vpci *t, uint32_t lo_off, uint64_t v)
{
    /* 64-bit fields are written as two 32-bit halves (4.1.3.1). */
    common_write(t, lo_off, 4, (uint32_t)v);
    common_write(t, lo_off + 4, 4, (uint32_t)(v >> 32));
}

/*
 * Tells the device where queue qidx lives (4.1.5.1.3) and enables it. *msix is the MSI-X table
 * entry for its interrupts or VIRTIO_MSI_NO_VECTOR; it comes back as the device read it back,
 * NO_VECTOR if it cannot use the entry (4.1.5.1.2.1): then the queue never interrupts.
 * -VNET_EIO if the device does not keep the queue enabled.
 */
int vpci_queue_setup(struct vpci *t, uint16_t qidx, struct virtq *q, uint16_t *msix)
{
    common_write(t, VIRTIO_PCI_COMMON_Q_SELECT, 2, qidx);
    common_write(t, VIRTIO_PCI_COMMON_Q_SIZE, 2, q->size);
    write64(t, VIRTIO_PCI_COMMON_Q_DESCLO, q->desc_phys);
    write64(t, VIRTIO_PCI_COMMON_Q_AVAILLO, q->avail_phys);
    write64(t, VIRTIO_PCI_COMMON_Q_USEDLO, q->used_phys);
    common_write(t, VIRTIO_PCI_COMMON_Q_MSIX, 2, *msix);
    *msix = (uint16_t)common_read(t, VIRTIO_PCI_COMMON_Q_MSIX, 2);
    q->notify_off = (uint16_t)common_read(t, VIRTIO_PCI_COMMON_Q_NOFF, 2);
    uint64_t at = (uint64_t)q->notify_off * t->notify_mult;
    if (at + 2 > t->notify.len)
        return -VNET_EIO;
    common_write(t, VIRTIO_PCI_COMMON_Q_ENABLE, 2, 1);
    return common_read(t, VIRTIO_PCI_COMMON_Q_ENABLE, 2) == 1 ? 0 : -VNET_EIO;
}

/* Notifies the device of new available entries in queue qidx (4.1.4.4: a 16-bit write of the
 * queue index at notify base + queue_notify_off * notify_off_multiplier). This write is the
 * VM exit that batching saves. */
void vpci_notify(struct vpci *t, const struct virtq *q, uint16_t qidx)
{
    uint64_t at = t->notify.off + (uint64_t)q->notify_off * t->notify_mult;
    t->p->bar_write(t->p->ctx, t->notify.bar, at, 2, qidx);
}

/* Stops configuration-change interrupts: nom reads link status when asked (vnet_link_up). */
void vpci_no_config_irq(struct vpci *t)
{
    common_write(t, VIRTIO_PCI_COMMON_MSIX, 2, VIRTIO_MSI_NO_VECTOR);
}

/* Changes whenever the device configuration changes (4.1.4.3.1): reads spanning several
 * fields retry until it is stable. */
uint8_t vpci_config_generation(struct vpci *t)
{
    return (uint8_t)common_read(t, VIRTIO_PCI_COMMON_CFGGENERATION, 1);
}

/* Reads the device-specific configuration (virtio_net_config, spec 5.1.4). */
uint32_t vpci_config_read(struct vpci *t, uint32_t off, uint32_t size)
{
    return t->p->bar_read(t->p->ctx, t->device.bar, t->device.off + off, size);
}
