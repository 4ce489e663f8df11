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
    uint8_t msix_bar, pba_bar;
    uint32_t msix_offset, pba_offset;
    volatile uint32_t *msix_table; /* kernel mapping (pci_init); never mapped to an owner */
    volatile uint8_t *virtio_status; /* virtio device_status (4.1.4.3), for resets; NULL: none */
    uint16_t virtio_legacy_port;     /* legacy virtio status port (4.1.4.8), 0: none */
    bool assignable;           /* an endpoint the kernel can reset: may be acquired */
    uint32_t owner;            /* app id, 0: free */
};

#endif
