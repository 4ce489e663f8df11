/* iommu.c: DMA remapping with Intel VT-d (VT-d spec 3.x), so that a device reaches only its
 * owner's memory. QEMU exposes it with `-device intel-iommu` (q35), described by the ACPI DMAR
 * table; without one the kernel runs as before and a device can DMA anywhere (paper 3.4 names
 * the IOMMU as the way to close that hole; this is that design, built).
 *
 * Model: one second-level page table per application that owns a device (its "domain", DID =
 * application id), mapping each frame the application owns at its physical address (IOVA = PA,
 * so the physical addresses the driver already uses, NOM_SYS_VIRT_TO_PHYS, stay valid). A
 * device's context entry points at its owner's domain while it is owned and is cleared when it
 * is released; a device without an entry is blocked (9.3: not present = every request faults).
 * The domain follows the application: built from its page tables at its first acquire, frames
 * added by NOM_SYS_MEM_MAP, removed by NOM_SYS_MEM_UNMAP before that call returns (the caller
 * invalidates the IOTLB while it holds the kernel lock, so no freed frame is handed out while a
 * device can still reach it). An owner's own pages are reachable read/write whatever their CPU
 * protection: the device is its owner's agent; what the IOMMU guarantees is everybody else.
 * Faults are recorded by the hardware (10.4.14) and reported on the console from the fault
 * event interrupt. Queued invalidation and interrupt remapping are not used. */
#include "defs.h"
#include "app.h"
#include "cpu.h"
#include "pci.h"

/* Registers (10.4) and their bits. */
#define REG_CAP     0x08
#define REG_ECAP    0x10
#define REG_GCMD    0x18
#define REG_GSTS    0x1c
#define REG_RTADDR  0x20
#define REG_CCMD    0x28
#define REG_FSTS    0x34
#define REG_FECTL   0x38
#define REG_FEDATA  0x3c
#define REG_FEADDR  0x40
#define GCMD_TE     (1u << 31)
#define GCMD_SRTP   (1u << 30)
#define CCMD_ICC    (1ull << 63)
#define CCMD_GLOBAL (1ull << 61)
#define IOTLB_IVT   (1ull << 63)
#define IOTLB_GLOBAL (1ull << 60)
#define IOTLB_DRAIN (3ull << 48)
#define FRCD_F      (1ull << 63)
#define SL_R        1ull  /* second-level entry: read, write (9.8) */
#define SL_W        2ull

static volatile uint8_t *regs;
static uint64_t root_table;          /* 256 root entries (9.1), one per bus */
static uint64_t domain[MAX_APPS + 1]; /* second-level table root per application id, 0: none */
static int levels;                   /* 3 (39-bit) or 4 (48-bit) */
static uint32_t iotlb_reg, fault_reg, fault_count;

static uint32_t rd32(uint32_t off) { return *(volatile uint32_t *)(regs + off); }
static uint64_t rd64(uint32_t off) { return *(volatile uint64_t *)(regs + off); }
static void wr32(uint32_t off, uint32_t v) { *(volatile uint32_t *)(regs + off) = v; }
static void wr64(uint32_t off, uint64_t v) { *(volatile uint64_t *)(regs + off) = v; }

bool iommu_on(void) { return regs != NULL; }

/* 10.4.4: one-shot command bits are written with the persistent ones kept as GSTS shows them. */
static void command(uint32_t bit) {
    uint32_t keep = rd32(REG_GSTS) & GCMD_TE;
    wr32(REG_GCMD, keep | bit);
    while (!(rd32(REG_GSTS) & bit))
        __asm__ volatile("pause");
}

static void invalidate_all(void) {
    __asm__ volatile("mfence" ::: "memory"); /* table writes before the hardware re-reads them */
    wr64(REG_CCMD, CCMD_ICC | CCMD_GLOBAL);
    while (rd64(REG_CCMD) & CCMD_ICC)
        __asm__ volatile("pause");
    wr64(iotlb_reg, IOTLB_IVT | IOTLB_GLOBAL | IOTLB_DRAIN);
    while (rd64(iotlb_reg) & IOTLB_IVT)
        __asm__ volatile("pause");
}

static uint64_t *table(uint64_t pa) { return P2V(pa & PTE_ADDR); }

/* The leaf entry for iova in root's tables, creating tables on the way when create is set. */
static uint64_t *sl_walk(uint64_t root, uint64_t iova, bool create) {
    uint64_t *t = table(root);
    for (int l = levels - 1; l > 0; l--) {
        uint64_t *e = &t[(iova >> (12 + 9 * l)) & 511];
        if (!(*e & (SL_R | SL_W))) {
            uint64_t pa = create ? frame_alloc() : 0; /* frame_alloc zeroes */
            if (!pa)
                return NULL;
            *e = pa | SL_R | SL_W;
        }
        t = table(*e);
    }
    return &t[(iova >> 12) & 511];
}

static void sl_free(uint64_t pa, int level) {
    uint64_t *t = table(pa);
    for (int i = 0; level > 0 && i < 512; i++)
        if (t[i] & (SL_R | SL_W))
            sl_free(t[i], level - 1);
    frame_free(pa & PTE_ADDR);
}

int iommu_map_frame(struct app *a, uint64_t pa) {
    if (!regs || !domain[a->id])
        return 0;
    uint64_t *e = sl_walk(domain[a->id], pa, true);
    if (!e)
        return -NOM_ENOMEM;
    *e = (pa & PTE_ADDR) | SL_R | SL_W;
    return 0;
}

void iommu_unmap_frame(struct app *a, uint64_t pa) {
    if (!regs || !domain[a->id])
        return;
    uint64_t *e = sl_walk(domain[a->id], pa, false);
    if (e)
        *e = 0;
}

/* After unmapping: no device of a may still use a stale translation. */
void iommu_flush(struct app *a) {
    if (regs && domain[a->id])
        invalidate_all();
}

static int map_each_frame(uint64_t pml4, struct app *a) {
    uint64_t *l4 = table(pml4);
    for (int i = 0; i < 256; i++) { /* the application half (vm.c) */
        if (!(l4[i] & PTE_P))
            continue;
        for (int j = 0; j < 512; j++) {
            uint64_t *l3 = table(l4[i]);
            if (!(l3[j] & PTE_P))
                continue;
            for (int k = 0; k < 512; k++) {
                uint64_t *l2 = table(l3[j]);
                if (!(l2[k] & PTE_P))
                    continue;
                uint64_t *l1 = table(l2[k]);
                for (int m = 0; m < 512; m++)
                    if ((l1[m] & PTE_P) && (l1[m] & PTE_SW_FRAME) &&
                        iommu_map_frame(a, l1[m] & PTE_ADDR) < 0)
                        return -NOM_ENOMEM;
            }
        }
    }
    return 0;
}

static uint64_t *context_entry(const struct pci_dev *d, bool create) {
    uint64_t *root = table(root_table) + 2 * d->bus;
    if (!(root[0] & 1)) {
        uint64_t pa = create ? frame_alloc() : 0;
        if (!pa)
            return NULL;
        root[0] = pa | 1;
    }
    return table(root[0]) + 2 * ((d->slot << 3) | d->func);
}

/* Gives d's DMA a's memory and nothing else. */
int iommu_attach(struct app *a, const struct pci_dev *d) {
    if (!regs)
        return 0;
    if (!domain[a->id]) {
        domain[a->id] = frame_alloc();
        if (!domain[a->id])
            return -NOM_ENOMEM;
        if (map_each_frame(a->pml4, a) < 0) {
            iommu_app_gone(a);
            return -NOM_ENOMEM;
        }
    }
    uint64_t *ctx = context_entry(d, true);
    if (!ctx)
        return -NOM_ENOMEM;
    ctx[1] = (uint64_t)(levels - 2) | ((uint64_t)a->id << 8); /* AW, DID (9.3) */
    ctx[0] = domain[a->id] | 1;                                /* P, TT 00: second level */
    invalidate_all();
    return 0;
}

/* d reaches no memory at all any more (its context entry is not present). */
void iommu_detach(const struct pci_dev *d) {
    if (!regs)
        return;
    uint64_t *ctx = context_entry(d, false);
    if (ctx) {
        ctx[0] = 0;
        ctx[1] = 0;
    }
    invalidate_all();
}

/* The application has ended and owns no device: its domain's tables go. */
void iommu_app_gone(struct app *a) {
    if (regs && domain[a->id]) {
        sl_free(domain[a->id], levels - 1);
        domain[a->id] = 0;
    }
}

/* The fault event interrupt: print and clear every recorded fault (10.4.14). */
void iommu_fault_irq(void) {
    for (uint32_t i = 0; regs && i < fault_count; i++) {
        uint32_t off = fault_reg + 16 * i;
        uint64_t hi = rd64(off + 8);
        if (!(hi & FRCD_F))
            continue;
        uint64_t addr = rd64(off) & PTE_ADDR;
        uint32_t sid = (uint32_t)(hi & 0xffff);
        kprintf("iommu: refused DMA %s at %lx from %02x:%02x.%x (reason %lu)\n",
                (hi >> 62) & 1 ? "read" : "write", addr, sid >> 8, (sid >> 3) & 31, sid & 7,
                (hi >> 32) & 0xff);
        wr64(off + 8, FRCD_F); /* write 1 to clear */
    }
    wr32(REG_FSTS, rd32(REG_FSTS)); /* overflow and pending bits, write 1 to clear */
}

void iommu_init(uint64_t rsdp_phys) {
    uint64_t base = acpi_find_dmar(rsdp_phys);
    if (!base)
        return;
    volatile uint8_t *r = vm_map_mmio(base, PAGE_SIZE);
    uint64_t cap = *(volatile uint64_t *)(r + REG_CAP), ecap = *(volatile uint64_t *)(r + REG_ECAP);
    uint32_t sagaw = (uint32_t)(cap >> 8) & 0x1f;
    levels = (sagaw & 4) ? 4 : (sagaw & 2) ? 3 : 0; /* 11.4.2: bit 2 = 4 levels, bit 1 = 3 */
    root_table = frame_alloc();
    if (!levels || !root_table) {
        kprintf("nom: iommu at %lx not used (sagaw %x)\n", base, sagaw);
        return;
    }
    regs = r;
    iotlb_reg = (uint32_t)((ecap >> 8) & 0x3ff) * 16 + 8;
    fault_reg = (uint32_t)((cap >> 24) & 0x3ff) * 16;
    fault_count = (uint32_t)((cap >> 40) & 0xff) + 1;
    wr32(REG_FEDATA, VEC_IOMMU);
    wr32(REG_FEADDR, 0xfee00000u | (cpus[0].apic_id << 12));
    wr32(REG_FECTL, 0); /* unmask the fault event interrupt */
    wr64(REG_RTADDR, root_table);
    command(GCMD_SRTP);
    invalidate_all();
    command(GCMD_TE);
    kprintf("nom: iommu on at %lx, %d-level tables: a device reaches only its owner's memory\n",
            base, levels);
}
