/* device.c: handing PCI devices to applications (paper 3.5). Acquiring resets the device, maps
 * its memory BARs into the owner (uncached; not the pages of the MSI-X table and pending bits,
 * which the kernel programs for irq_attach) and opens its I/O-port BARs in the owner's I/O
 * bitmap; MSI-X interrupts become upcalls. DMA runs in trusted mode: the owner learns physical
 * addresses (NOM_SYS_VIRT_TO_PHYS) and programs the device itself, so it must be trusted not to
 * aim the device at memory it does not own. Releasing (or the owner's death) takes the mappings
 * away on every vCPU, then resets the device and turns bus mastering off, before any of the
 * owner's frames can be reused. */
#include "defs.h"
#include "cpu.h"
#include "app.h"
#include "pci.h"

struct grant_record {
    uint64_t va[NOM_PCI_BARS];
    uint64_t next_va; /* per-application bump pointer in the device window */
};
static struct grant_record grants[NOM_BB_MAX_DEVICES];
static uint64_t window_next[MAX_APPS];

static struct { struct ctx *ctx; int slot; } vector_owner[256];

static void publish_device(uint32_t index, uint32_t owner) {
    struct nom_bb *bb = bb_begin_write();
    bb->devices[index].owner = owner ? owner : NOM_NO_OWNER;
    bb->devices[index].state = owner ? NOM_DEV_OWNED : NOM_DEV_FREE;
    bb_end_write();
}

static void io_ports(struct app *a, uint64_t first, uint64_t n, bool allow) {
    for (uint64_t p = first; p < first + n && p < 65536; p++) {
        if (allow)
            a->io_bitmap[p / 8] &= ~(1u << (p % 8));
        else
            a->io_bitmap[p / 8] |= 1u << (p % 8);
    }
}

static void unmap_bars(struct app *a, struct pci_dev *d, uint32_t index) {
    for (int b = 0; b < NOM_PCI_BARS; b++) {
        if (d->bar_kind[b] == NOM_BAR_MEM && grants[index].va[b]) {
            for (uint64_t off = 0; off < PAGE_ROUND_UP(d->bar_size[b]); off += PAGE_SIZE)
                vm_unmap_page(a->pml4, grants[index].va[b] + off);
        } else if (d->bar_kind[b] == NOM_BAR_IO && a->io_bitmap) {
            io_ports(a, d->bar_base[b], d->bar_size[b], false);
        }
        grants[index].va[b] = 0;
    }
}

int device_acquire(struct app *a, uint32_t index, uint64_t grant_uva) {
    struct pci_dev *d = pci_device(index);
    if (!d)
        return -NOM_ENOENT;
    if (!d->assignable)
        return -NOM_EPERM;
    if (d->owner)
        return -NOM_EBUSY;
    if (!vm_user_range_ok(a->pml4, grant_uva, sizeof(struct nom_device_grant), true))
        return -NOM_EFAULT;
    struct nom_device_grant g;
    memset(&g, 0, sizeof g);
    uint64_t *next = &window_next[a->id - 1];
    if (!*next)
        *next = NOM_DEVICE_WINDOW;
    uint64_t window_start = *next;
    for (int b = 0; b < NOM_PCI_BARS; b++) {
        g.bar_kind[b] = d->bar_kind[b];
        g.bar_size[b] = d->bar_size[b];
        if (d->bar_kind[b] == NOM_BAR_IO) {
            if (!a->io_bitmap) {
                uint64_t pa = frame_alloc_contig(2);
                if (!pa)
                    goto nomem;
                a->io_bitmap = P2V(pa);
                memset(a->io_bitmap, 0xff, 8192);
            }
            io_ports(a, d->bar_base[b], d->bar_size[b], true);
            g.bar_addr[b] = d->bar_base[b];
        } else if (d->bar_kind[b] == NOM_BAR_MEM) {
            uint64_t pages = PAGE_ROUND_UP(d->bar_size[b]) / PAGE_SIZE;
            if (*next + pages * PAGE_SIZE > NOM_DEVICE_WINDOW_END)
                goto nomem;
            grants[index].va[b] = *next; /* before mapping: a failure unmaps what was mapped */
            for (uint64_t i = 0; i < pages; i++) {
                uint64_t pa = PAGE_ROUND_DOWN(d->bar_base[b]) + i * PAGE_SIZE;
                if (!pci_msix_page(d, pa) &&
                    vm_map_page(a->pml4, *next + i * PAGE_SIZE, pa,
                                PTE_P | PTE_U | PTE_W | PTE_PCD | PTE_PWT | PTE_NX | PTE_SW_DEVICE) < 0)
                    goto nomem;
            }
            g.bar_addr[b] = *next + (d->bar_base[b] & (PAGE_SIZE - 1));
            *next += pages * PAGE_SIZE;
        }
    }
    g.msix_entries = d->msix_entries;
    int r = iommu_attach(a, d); /* before the reset turns bus mastering on */
    if (r == 0)
        r = pci_reset_for_owner(d);
    if (r < 0)
        goto undo;
    d->owner = a->id;
    sched_sync_app(a, SYNC_IOMAP);
    copy_to_user(a->pml4, grant_uva, &g, sizeof g);
    publish_device(index, a->id);
    return 0;
nomem:
    r = -NOM_ENOMEM;
undo:
    unmap_bars(a, d, index);
    sched_sync_app(a, SYNC_TLB | SYNC_IOMAP);
    *next = window_start;
    return r;
}

static void detach_vectors(uint32_t index) {
    for (int v = 0; v < 256; v++) {
        struct ctx *c = vector_owner[v].ctx;
        if (c && c->irq_device[vector_owner[v].slot] == index) {
            c->irq_vector[vector_owner[v].slot] = 0;
            c->irq_pending &= ~(1u << vector_owner[v].slot);
            vector_owner[v].ctx = NULL;
            irq_free_vector(v);
        }
    }
}

int device_release(struct app *a, uint32_t index) {
    struct pci_dev *d = pci_device(index);
    if (!d)
        return -NOM_ENOENT;
    if (d->owner != a->id)
        return -NOM_EPERM;
    detach_vectors(index);
    unmap_bars(a, d, index);
    sched_sync_app(a, SYNC_TLB | SYNC_IOMAP); /* no vCPU of a reaches the device any more */
    pci_msix_disable(d);
    pci_quiesce(d);
    iommu_detach(d); /* reset and not mastering: now it reaches no memory at all */
    d->owner = 0;
    publish_device(index, 0);
    return 0;
}

void device_release_all(struct app *a) {
    for (uint32_t i = 0; i < pci_device_count(); i++)
        if (pci_device(i)->owner == a->id)
            device_release(a, i);
}

int device_irq_attach(struct ctx *c, uint32_t index, uint32_t entry, uint64_t cookie) {
    struct pci_dev *d = pci_device(index);
    if (!d)
        return -NOM_ENOENT;
    if (d->owner != c->app->id)
        return -NOM_EPERM;
    if (!d->msix_cap || entry >= d->msix_entries)
        return -NOM_EINVAL;
    int slot = 0;
    while (slot < MAX_IRQS_PER_CTX && c->irq_vector[slot])
        slot++; /* slots of released devices are free again */
    if (slot == MAX_IRQS_PER_CTX)
        return -NOM_ENOMEM;
    int v = irq_alloc_vector();
    if (v < 0)
        return v;
    int r = pci_msix_program(d, entry, cpus[c->cpu].apic_id, (uint32_t)v);
    if (r < 0) {
        irq_free_vector(v);
        return r;
    }
    c->irq_cookie[slot] = cookie;
    c->irq_vector[slot] = v;
    c->irq_device[slot] = index;
    vector_owner[v].ctx = c;
    vector_owner[v].slot = slot;
    return 0;
}

void device_irq(int vector) {
    struct ctx *c = vector_owner[vector].ctx;
    if (!c || c->state == CTX_DEAD)
        return;
    c->irq_pending |= 1u << vector_owner[vector].slot;
    sched_wake(c, NOM_WAKE_IRQ);
}

/* A context is going away: its vectors are freed. */
void device_ctx_gone(struct ctx *c) {
    for (int v = 0; v < 256; v++) {
        if (vector_owner[v].ctx == c) {
            vector_owner[v].ctx = NULL;
            irq_free_vector(v);
        }
    }
}
