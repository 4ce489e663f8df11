/* pci.c: enumerates every PCI function through configuration mechanism #1 (ports 0xcf8/0xcfc,
 * PCI local bus spec 3.0, 3.2.2.3.2), sizes its BARs, finds MSI-X, and programs MSI-X entries
 * for device_irq_attach (PCI spec 6.8.2). Configuration space stays the kernel's: applications
 * reach it through system calls that refuse BARs and the MSI-X capability. */
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

/* BARs (0x10-0x27) and the MSI-X capability header stay the kernel's. */
bool pci_config_write_allowed(const struct pci_dev *d, uint32_t off, uint32_t size) {
    if (off < 0x28 && off + size > 0x10)
        return false;
    if (d->msix_cap && off < d->msix_cap + 12u && off + size > d->msix_cap)
        return false;
    return true;
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
            uint32_t table = pci_config_read(d, off + 4, 4);
            d->msix_bar = table & 7;
            d->msix_offset = table & ~7u;
            return;
        }
        off = pci_config_read(d, off + 1, 1) & 0xfc;
    }
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

/* Memory decoding, I/O decoding and bus mastering on (acquire) or all off (release): a device
 * whose owner is gone must not keep writing into freed frames. */
void pci_enable(struct pci_dev *d, bool on) {
    uint32_t cmd = pci_config_read(d, 0x04, 2);
    cmd = on ? (cmd | 0x7) : (cmd & ~0x7u);
    pci_config_write(d, 0x04, 2, cmd);
}

int pci_msix_program(struct pci_dev *d, uint32_t entry, uint32_t apic_id, uint32_t vector) {
    if (!d->msix_cap || entry >= d->msix_entries || d->bar_kind[d->msix_bar] != NOM_BAR_MEM)
        return -NOM_EINVAL;
    if (!d->msix_table)
        d->msix_table = vm_map_mmio(d->bar_base[d->msix_bar] + d->msix_offset, d->msix_entries * 16);
    volatile uint32_t *e = d->msix_table + entry * 4;
    e[0] = 0xfee00000u | (apic_id << 12); /* message address: fixed, physical destination */
    e[1] = 0;
    e[2] = vector;                        /* message data: edge, fixed */
    e[3] = 0;                             /* unmasked */
    uint32_t ctl = pci_config_read(d, d->msix_cap + 2, 2);
    pci_config_write(d, d->msix_cap + 2, 2, (ctl | 0x8000) & ~0x4000u); /* enable, no function mask */
    return 0;
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
