/*
 * virtio-net on nom (contract in vnet_nom.h): the platform operations of virtio_net.h made of
 * libnom and the kernel ABI. Registers are reached through the BAR mappings the kernel made
 * at device_acquire (uncached, abi.h); PCI configuration space through the pci_config_read
 * system call (capability walk at open only); DMA memory is trusted-mode memory with its
 * physical address (paper 3.5); the MSI-X interrupt arrives as an upcall that libnom turns
 * into a call of irq_upcall() in scheduler context.
 */
#include <stdbool.h>

#include <nom/abi.h>
#include <nom/bb.h>
#include <nom/dma.h>
#include <nom/sched.h>
#include <nom/syscall.h>
#include <nom/time.h>

#include "vnet_nom.h"

#define VIRTIO_VENDOR 0x1af4
#define VNET_NOM_MAX 8                       /* devices one application drives */
#define IRQ_COOKIE(bb) (0x766e657400000000ull | (bb)) /* "vnet" + board index */

struct binding {
    struct vnet *dev;  /* NULL while free, or while vnet_open runs */
    bool used;
    uint32_t bb;
    bool pci_failed;   /* a configuration read was refused during vnet_open */
    struct nom_device_grant grant;
};

static struct binding bindings[VNET_NOM_MAX];

static uint32_t pci_read(void *ctx, uint32_t off, uint32_t size)
{
    struct binding *b = ctx;
    int64_t v = nom_sys_pci_config_read(b->bb, off, size);
    if (v < 0)
        b->pci_failed = true; /* all ones reads like a real value: vnet_nom_open gives up */
    return v < 0 ? 0xffffffffu : (uint32_t)v;
}

static uint64_t bar_size(void *ctx, uint32_t bar)
{
    struct binding *b = ctx;
    return bar < NOM_PCI_BARS && b->grant.bar_kind[bar] == NOM_BAR_MEM ? b->grant.bar_size[bar] : 0;
}

static uint32_t bar_read(void *ctx, uint32_t bar, uint64_t off, uint32_t size)
{
    uintptr_t at = ((struct binding *)ctx)->grant.bar_addr[bar] + off;
    switch (size) {
    case 1: return *(volatile uint8_t *)at;
    case 2: return *(volatile uint16_t *)at;
    default: return *(volatile uint32_t *)at;
    }
}

static void bar_write(void *ctx, uint32_t bar, uint64_t off, uint32_t size, uint32_t value)
{
    uintptr_t at = ((struct binding *)ctx)->grant.bar_addr[bar] + off;
    switch (size) {
    case 1: *(volatile uint8_t *)at = (uint8_t)value; break;
    case 2: *(volatile uint16_t *)at = (uint16_t)value; break;
    default: *(volatile uint32_t *)at = value; break;
    }
}

static void *dma_alloc(void *ctx, size_t size, uint64_t *phys)
{
    (void)ctx;
    return nom_dma_alloc(size, phys);
}

static void dma_free(void *ctx, void *mem, size_t size)
{
    (void)ctx;
    nom_dma_free(mem, size);
}

static uint64_t tsc(void *ctx)
{
    (void)ctx;
    return nom_tsc();
}

/* Scheduler context, after the upcall: only counts; the idle hook or the caller's poll does
 * the work (virtio_net.h, "Interrupt and poll modes"). */
static void irq_upcall(void *arg)
{
    struct binding *b = arg;
    if (b->dev)
        vnet_interrupt(b->dev);
}

static int irq_attach(void *ctx, uint32_t entry)
{
    struct binding *b = ctx;
    if (entry >= b->grant.msix_entries || nom_irq_handler_set(IRQ_COOKIE(b->bb), irq_upcall, b))
        return -1;
    if (nom_sys_irq_attach(b->bb, entry, IRQ_COOKIE(b->bb)) < 0) {
        nom_irq_handler_set(IRQ_COOKIE(b->bb), NULL, NULL);
        return -1;
    }
    return 0;
}

static bool is_free_virtio_net(int index)
{
    struct nom_bb bb;
    nom_bb_snapshot(&bb);
    if (index < 0 || (uint32_t)index >= bb.ndevices)
        return false;
    const struct nom_bb_device *d = &bb.devices[index];
    return d->vendor == VIRTIO_VENDOR && (d->device == 0x1041 || d->device == 0x1000)
           && d->state == NOM_DEV_FREE;
}

/* The first free virtio-net device on the board, or -1. */
static int find_free(void)
{
    struct nom_bb bb;
    nom_bb_snapshot(&bb);
    for (uint32_t i = 0; i < bb.ndevices && i < NOM_BB_MAX_DEVICES; i++)
        if (is_free_virtio_net((int)i))
            return (int)i;
    return -1;
}

static struct binding *free_binding(void)
{
    for (int i = 0; i < VNET_NOM_MAX; i++)
        if (!bindings[i].used)
            return &bindings[i];
    return NULL;
}

static struct binding *binding_of(const struct vnet *dev)
{
    for (int i = 0; i < VNET_NOM_MAX; i++)
        if (bindings[i].used && bindings[i].dev == dev)
            return &bindings[i];
    return NULL;
}

int vnet_nom_open(struct vnet **out, int bb_index, const struct vnet_config *cfg)
{
    int index = bb_index < 0 ? find_free() : bb_index;
    struct binding *b = free_binding();
    if (index < 0 || !b || !is_free_virtio_net(index))
        return -VNET_ENODEV;
    *b = (struct binding){ .used = true, .bb = (uint32_t)index };
    if (nom_sys_device_acquire(b->bb, &b->grant) < 0) {
        b->used = false;
        return -VNET_ENODEV;
    }
    struct vnet_platform plat = {
        .ctx = b, .pci_read = pci_read, .bar_size = bar_size, .bar_read = bar_read,
        .bar_write = bar_write, .dma_alloc = dma_alloc, .dma_free = dma_free, .tsc = tsc,
        .tsc_hz = nom_tsc_hz(), .irq_attach = irq_attach,
    };
    int err = vnet_open(&b->dev, &plat, cfg);
    if (!err && b->pci_failed) {
        vnet_close(b->dev);
        err = -VNET_EIO;
    }
    if (err) {
        nom_irq_handler_set(IRQ_COOKIE(b->bb), NULL, NULL);
        nom_sys_device_release(b->bb);
        b->used = false;
        return err;
    }
    *out = b->dev;
    return 0;
}

int vnet_nom_bb_index(const struct vnet *dev)
{
    struct binding *b = binding_of(dev);
    return b ? (int)b->bb : -1;
}

void vnet_nom_close(struct vnet *dev)
{
    struct binding *b = binding_of(dev);
    if (!b)
        return;
    nom_irq_handler_set(IRQ_COOKIE(b->bb), NULL, NULL);
    vnet_close(dev);
    nom_sys_device_release(b->bb);
    *b = (struct binding){ 0 };
}
