/* pci.c: enumerates every PCI function through configuration mechanism #1 (ports 0xcf8/0xcfc,
 * PCI local bus spec 3.0, 3.2.2.3.2), sizes its BARs, finds MSI-X, and programs MSI-X entries
 * for device_irq_attach (PCI spec 6.8.2). Configuration space, the MSI-X table and its pending
 * bits stay the kernel's: an owner may write only the command bits it was granted. Only devices
 * the kernel can reset (virtio, spec 1.1 2.1.2) may be acquired, so none is handed over, or
 * left behind by a dead owner, still doing DMA. */
#include "defs.h"
#include "pci.h"

static struct pci_dev devs[NOM_BB_MAX_DEVICES];
static uint32_t ndevs;

static uint32_t cfg_addr(uint8_t bus, uint8_t slot, uint8_t func, uint32_t off) {
    return 0x80000000u | (bus << 16) | (slot << 11) | (func << 8) | (off & 0xfc);
}

static uint32_t cfg_read32(uint8_t bus, uint8_t slot, uint8_t func, uint32_t off) {
    outl(0xcf8, cfg_addr(bus, slot, func, off));
    return inl(0xcfc);
}

static void cfg_write32(uint8_t bus, uint8_t slot, uint8_t func, uint32_t off, uint32_t v) {
    outl(0xcf8, cfg_addr(bus, slot, func, off));
    outl(0xcfc, v);
}

uint32_t pci_config_read(const struct pci_dev *d, uint32_t off, uint32_t size) {
    uint32_t v = cfg_read32(d->bus, d->slot, d->func, off) >> ((off & 3) * 8);
    return size == 4 ? v : v & ((1u << (size * 8)) - 1);
}

void pci_config_write(const struct pci_dev *d, uint32_t off, uint32_t size, uint32_t v) {
    if (size == 4) {
        cfg_write32(d->bus, d->slot, d->func, off, v);
        return;
    }
    uint32_t shift = (off & 3) * 8, mask = ((1u << (size * 8)) - 1) << shift;
    uint32_t old = cfg_read32(d->bus, d->slot, d->func, off);
    cfg_write32(d->bus, d->slot, d->func, off, (old & ~mask) | ((v << shift) & mask));
}

#define CMD_IO 0x1u
#define CMD_MEM 0x2u
#define CMD_MASTER 0x4u
#define CMD_INTX_OFF 0x400u

/* The command bits an owner may change: decoding of the BAR kinds it has, bus mastering, INTx
 * off. Nothing else in configuration space is the owner's: not the BARs, not the MSI-X
 * capability, not virtio's configuration-access window (4.1.4.7), which reaches every BAR,
 * the MSI-X table included. */
static uint32_t granted_command_bits(const struct pci_dev *d) {
    uint32_t bits = CMD_MASTER | CMD_INTX_OFF;
    for (int b = 0; b < NOM_PCI_BARS; b++)
        bits |= d->bar_kind[b] == NOM_BAR_MEM ? CMD_MEM : d->bar_kind[b] == NOM_BAR_IO ? CMD_IO : 0;
    return bits;
}

bool pci_config_write_allowed(const struct pci_dev *d, uint32_t off, uint32_t size, uint32_t v) {
    if (off < 0x04 || off + size > 0x06)
        return false;
    uint32_t shift = (off - 0x04) * 8, mask = ((1u << (size * 8)) - 1) << shift;
    uint32_t cur = pci_config_read(d, 0x04, 2), next = (cur & ~mask) | ((v << shift) & mask);
    return ((cur ^ next) & ~granted_command_bits(d)) == 0;
}

static void size_bars(struct pci_dev *d) {
    uint32_t cmd = pci_config_read(d, 0x04, 2);
    pci_config_write(d, 0x04, 2, cmd & ~0x3u); /* no decoding while sizing */
    for (int i = 0; i < NOM_PCI_BARS; i++) {
        uint32_t off = 0x10 + i * 4, orig = pci_config_read(d, off, 4);
        pci_config_write(d, off, 4, 0xffffffff);
        uint32_t probe = pci_config_read(d, off, 4);
        pci_config_write(d, off, 4, orig);
        if (probe == 0 || probe == 0xffffffff)
            continue;
        if (orig & 1) {
            d->bar_kind[i] = NOM_BAR_IO;
            d->bar_base[i] = orig & ~3u;
            d->bar_size[i] = (~(probe & ~3u) + 1) & 0xffff;
            continue;
        }
        d->bar_kind[i] = NOM_BAR_MEM;
        uint64_t base = orig & ~0xfu, mask = probe & ~0xfu;
        if (((orig >> 1) & 3) == 2 && i + 1 < NOM_PCI_BARS) { /* 64-bit BAR */
            uint32_t off_hi = off + 4, orig_hi = pci_config_read(d, off_hi, 4);
            pci_config_write(d, off_hi, 4, 0xffffffff);
            uint32_t probe_hi = pci_config_read(d, off_hi, 4);
            pci_config_write(d, off_hi, 4, orig_hi);
            base |= (uint64_t)orig_hi << 32;
            mask |= (uint64_t)probe_hi << 32;
            d->bar_64[i] = true;
            d->bar_base[i] = base;
            d->bar_size[i] = ~mask + 1;
            i++;
            continue;
        }
        d->bar_base[i] = base;
        d->bar_size[i] = (uint32_t)(~mask + 1);
    }
    pci_config_write(d, 0x04, 2, cmd);
}

static void find_msix(struct pci_dev *d) {
    if (!(pci_config_read(d, 0x06, 2) & 0x10)) /* no capability list */
        return;
    uint32_t off = pci_config_read(d, 0x34, 1) & 0xfc;
    for (int guard = 0; off && guard < 48; guard++) {
        if (pci_config_read(d, off, 1) == 0x11) {
            d->msix_cap = (uint8_t)off;
            d->msix_entries = (pci_config_read(d, off + 2, 2) & 0x7ff) + 1;
            uint32_t table = pci_config_read(d, off + 4, 4), pba = pci_config_read(d, off + 8, 4);
            d->msix_bar = table & 7;
            d->msix_offset = table & ~7u;
            d->pba_bar = pba & 7;
            d->pba_offset = pba & ~7u;
            return;
        }
        off = pci_config_read(d, off + 1, 1) & 0xfc;
    }
}

/* Where a virtio device's status register is (virtio 1.1, 4.1.4.3: common configuration,
 * cfg_type 1; 4.1.4.8: legacy I/O BAR 0, offset 18), mapped for the kernel's resets. */
static void find_virtio_status(struct pci_dev *d) {
    if (d->vendor != 0x1af4 || !(pci_config_read(d, 0x06, 2) & 0x10))
        return;
    uint32_t off = pci_config_read(d, 0x34, 1) & 0xfc;
    for (int guard = 0; off && guard < 48; guard++) {
        uint32_t bar = pci_config_read(d, off + 4, 1);
        if (pci_config_read(d, off, 1) == 0x09 && pci_config_read(d, off + 3, 1) == 1 &&
            bar < NOM_PCI_BARS && d->bar_kind[bar] == NOM_BAR_MEM && d->bar_base[bar]) {
            uint8_t *common = vm_map_mmio(d->bar_base[bar] + pci_config_read(d, off + 8, 4), 24);
            d->virtio_status = common ? common + 20 : NULL;
            return;
        }
        off = pci_config_read(d, off + 1, 1) & 0xfc;
    }
    if (d->bar_kind[0] == NOM_BAR_IO && d->bar_base[0])
        d->virtio_legacy_port = (uint16_t)d->bar_base[0];
}

static void probe(uint8_t bus, uint8_t slot, uint8_t func) {
    uint32_t id = cfg_read32(bus, slot, func, 0);
    if ((id & 0xffff) == 0xffff || ndevs == NOM_BB_MAX_DEVICES)
        return;
    struct pci_dev *d = &devs[ndevs++];
    memset(d, 0, sizeof *d);
    d->bus = bus, d->slot = slot, d->func = func;
    d->vendor = id & 0xffff, d->device = id >> 16;
    uint32_t cls = cfg_read32(bus, slot, func, 8);
    d->revision = cls & 0xff, d->prog_if = (cls >> 8) & 0xff;
    d->subclass = (cls >> 16) & 0xff, d->class_code = cls >> 24;
    uint8_t header = (cfg_read32(bus, slot, func, 0x0c) >> 16) & 0x7f;
    if (header == 0) {
        size_bars(d);
        find_msix(d);
        find_virtio_status(d);
        if (d->msix_cap && d->bar_kind[d->msix_bar] == NOM_BAR_MEM)
            d->msix_table = vm_map_mmio(d->bar_base[d->msix_bar] + d->msix_offset, d->msix_entries * 16);
        /* Bridges (host, LPC, PCI) and devices the kernel cannot reset are never handed out. */
        d->assignable = d->class_code != 0x06 && (d->virtio_status || d->virtio_legacy_port) &&
                        (!d->msix_cap || d->msix_table);
    }
}

void pci_init(void) {
    for (int bus = 0; bus < 256; bus++) {
        for (int slot = 0; slot < 32; slot++) {
            if ((cfg_read32(bus, slot, 0, 0) & 0xffff) == 0xffff)
                continue;
            bool multi = (cfg_read32(bus, slot, 0, 0x0c) >> 16) & 0x80;
            for (int func = 0; func < (multi ? 8 : 1); func++)
                probe(bus, slot, func);
        }
    }
}

struct pci_dev *pci_device(uint32_t index) {
    return index < ndevs ? &devs[index] : NULL;
}

uint32_t pci_device_count(void) { return ndevs; }

/* Writes 0 to the virtio status and waits for it to read back 0 (virtio 1.1, 4.1.4.3.2): the
 * device then has forgotten its queues and does no DMA until a driver sets it up again. */
static bool virtio_reset(struct pci_dev *d) {
    for (int i = 0; i < 1000000; i++) {
        if (d->virtio_status) {
            if (i == 0)
                *(volatile uint8_t *)d->virtio_status = 0;
            if (*(volatile uint8_t *)d->virtio_status == 0)
                return true;
        } else {
            if (i == 0)
                outb(d->virtio_legacy_port + 18, 0);
            if (inb(d->virtio_legacy_port + 18) == 0)
                return true;
        }
        __asm__ volatile("pause");
    }
    return false;
}

/* Bus mastering off at once, then a reset with decoding on; leaves decoding as `keep` says.
 * false if the device did not confirm the reset. */
static bool quiesce(struct pci_dev *d, uint32_t keep) {
    uint32_t cmd = pci_config_read(d, 0x04, 2) & ~(CMD_MASTER | CMD_INTX_OFF);
    pci_config_write(d, 0x04, 2, cmd | CMD_IO | CMD_MEM);
    bool ok = virtio_reset(d);
    pci_config_write(d, 0x04, 2, (cmd & ~(CMD_IO | CMD_MEM)) | keep);
    return ok;
}

/* Before a new owner gets the device: a reset, whatever the last owner or the firmware left
 * running, then decoding and bus mastering on. -NOM_EBUSY if the device would not reset. */
int pci_reset_for_owner(struct pci_dev *d) {
    if (!quiesce(d, CMD_IO | CMD_MEM)) {
        pci_config_write(d, 0x04, 2, pci_config_read(d, 0x04, 2) & ~(CMD_IO | CMD_MEM));
        return -NOM_EBUSY;
    }
    pci_config_write(d, 0x04, 2, pci_config_read(d, 0x04, 2) | CMD_MASTER);
    return 0;
}

/* The owner is gone (released or dead): no more DMA into frames that will be reused, no more
 * decoding. The next acquire resets the device again before it enables anything. */
void pci_quiesce(struct pci_dev *d) {
    quiesce(d, 0);
}

int pci_msix_program(struct pci_dev *d, uint32_t entry, uint32_t apic_id, uint32_t vector) {
    if (!d->msix_table || entry >= d->msix_entries)
        return -NOM_EINVAL;
    volatile uint32_t *e = d->msix_table + entry * 4;
    e[0] = 0xfee00000u | (apic_id << 12); /* message address: fixed, physical destination */
    e[1] = 0;
    e[2] = vector;                        /* message data: edge, fixed */
    e[3] = 0;                             /* unmasked */
    uint32_t ctl = pci_config_read(d, d->msix_cap + 2, 2);
    pci_config_write(d, d->msix_cap + 2, 2, (ctl | 0x8000) & ~0x4000u); /* enable, no function mask */
    return 0;
}

/* Does the page at physical address pa hold any of d's MSI-X table or pending bits? Such pages
 * are never mapped to an owner: whoever writes the table chooses the vector and the target
 * (exception vectors, the kernel's, another application's). */
bool pci_msix_page(const struct pci_dev *d, uint64_t pa) {
    if (!d->msix_cap)
        return false;
    uint64_t table = d->bar_base[d->msix_bar] + d->msix_offset;
    uint64_t pba = d->bar_base[d->pba_bar] + d->pba_offset;
    uint64_t table_end = table + d->msix_entries * 16ull, pba_end = pba + (d->msix_entries + 63) / 64 * 8;
    return (pa < table_end && pa + PAGE_SIZE > table) || (pa < pba_end && pa + PAGE_SIZE > pba);
}

void pci_msix_disable(struct pci_dev *d) {
    if (!d->msix_cap)
        return;
    if (d->msix_table)
        for (uint32_t i = 0; i < d->msix_entries; i++)
            d->msix_table[i * 4 + 3] = 1; /* masked */
    uint32_t ctl = pci_config_read(d, d->msix_cap + 2, 2);
    pci_config_write(d, d->msix_cap + 2, 2, ctl & ~0x8000u);
}
