/* acpi.c: finds the CPUs in the ACPI MADT (ACPI 6.x, 5.2.12) and the IOMMU in the DMAR
 * table (VT-d 8.1). The RSDP comes from the
 * multiboot2 ACPI tag, so no memory scanning is needed. */
#include "defs.h"

struct sdt_header {
    char signature[4];
    uint32_t length;
    uint8_t revision, checksum;
    char oem_id[6], oem_table_id[8];
    uint32_t oem_revision, creator_id, creator_revision;
} __attribute__((packed));

struct rsdp {
    char signature[8];
    uint8_t checksum;
    char oem_id[6];
    uint8_t revision;
    uint32_t rsdt;
    uint32_t length;
    uint64_t xsdt;
} __attribute__((packed));

static bool checksum_ok(const void *p, uint32_t len) {
    uint8_t sum = 0;
    for (uint32_t i = 0; i < len; i++)
        sum += ((const uint8_t *)p)[i];
    return sum == 0;
}

static const struct sdt_header *find_table(const struct rsdp *r, const char *sig) {
    bool x = r->revision >= 2 && r->xsdt;
    const struct sdt_header *root = P2V(x ? r->xsdt : r->rsdt);
    uint32_t entry = x ? 8 : 4;
    uint32_t n = (root->length - sizeof *root) / entry;
    const uint8_t *entries = (const uint8_t *)(root + 1);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t pa = 0;
        memcpy(&pa, entries + i * entry, entry);
        const struct sdt_header *t = P2V(pa);
        if (memcmp(t->signature, sig, 4) == 0 && checksum_ok(t, t->length))
            return t;
    }
    return NULL;
}

/* The register base of the first DMA-remapping unit (DRHD) in the ACPI DMAR table (VT-d spec
 * 8.1, 8.3), or 0 when there is none (no IOMMU). */
uint64_t acpi_find_dmar(uint64_t rsdp_phys) {
    const struct rsdp *r = rsdp_phys ? P2V(rsdp_phys) : NULL;
    if (!r || memcmp(r->signature, "RSD PTR ", 8) != 0)
        return 0;
    const struct sdt_header *dmar = find_table(r, "DMAR");
    if (!dmar)
        return 0;
    const uint8_t *p = (const uint8_t *)dmar + 48, *end = (const uint8_t *)dmar + dmar->length;
    while (p + 16 <= end) {
        uint16_t type, len;
        memcpy(&type, p, 2);
        memcpy(&len, p + 2, 2);
        if (len < 4)
            break;
        if (type == 0) { /* DRHD: type, length, flags, reserved, segment, register base */
            uint64_t base;
            memcpy(&base, p + 8, 8);
            return base;
        }
        p += len;
    }
    return 0;
}

/* Returns the number of enabled CPUs (APIC IDs in apic_ids, boot CPU not necessarily first). */
int acpi_find_cpus(uint64_t rsdp_phys, uint32_t *apic_ids, int max, uint64_t *lapic_phys) {
    *lapic_phys = 0xfee00000;
    if (!rsdp_phys)
        return 0;
    const struct rsdp *r = P2V(rsdp_phys);
    if (memcmp(r->signature, "RSD PTR ", 8) != 0)
        return 0;
    const struct sdt_header *madt = find_table(r, "APIC");
    if (!madt)
        return 0;
    const uint8_t *p = (const uint8_t *)madt + sizeof *madt;
    *lapic_phys = *(const uint32_t *)p;
    const uint8_t *end = (const uint8_t *)madt + madt->length;
    int n = 0;
    for (p += 8; p + 2 <= end && p[1] >= 2; p += p[1]) {
        if (p[0] == 0 && (*(const uint32_t *)(p + 4) & 1) && n < max)
            apic_ids[n++] = p[3];                      /* processor local APIC */
        else if (p[0] == 9 && (*(const uint32_t *)(p + 8) & 1) && n < max)
            apic_ids[n++] = *(const uint32_t *)(p + 4); /* processor local x2APIC */
        else if (p[0] == 5)
            *lapic_phys = *(const uint64_t *)(p + 4);  /* 64-bit LAPIC address override */
    }
    return n;
}
