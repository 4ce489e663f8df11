/* pci.h: what the kernel knows of each PCI function. */
#ifndef NOM_PCI_H
#define NOM_PCI_H

#include "defs.h"

struct pci_dev {
    uint8_t bus, slot, func;
    uint16_t vendor, device;
    uint8_t class_code, subclass, prog_if, revision;
    uint64_t bar_base[NOM_PCI_BARS], bar_size[NOM_PCI_BARS];
    uint32_t bar_kind[NOM_PCI_BARS];
    bool bar_64[NOM_PCI_BARS];
    uint8_t msix_cap;          /* config offset of the MSI-X capability, 0 if none */
    uint32_t msix_entries;
    uint8_t msix_bar;
    uint32_t msix_offset;
    volatile uint32_t *msix_table; /* kernel mapping, set on first use */
    uint32_t owner;            /* app id, 0: free */
};

#endif
