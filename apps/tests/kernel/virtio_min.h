/* virtio_min.h: just enough of virtio 1.x PCI (spec 4.1.4) for the kernel tests to find a
 * NIC's configuration structures through the PCI capabilities and the BARs the kernel mapped. */
#ifndef VIRTIO_MIN_H
#define VIRTIO_MIN_H

#include "ktest.h"

struct vdev {
    uint32_t index;
    struct nom_device_grant grant;
    volatile uint8_t *common, *device_cfg, *notify_base;
    uint32_t notify_mult;
};

static inline int is_virtio_net(const volatile struct nom_bb_device *d) {
    return d->vendor == 0x1af4 && (d->device == 0x1041 || d->device == 0x1000);
}

/* Walks the capability list (through the kernel) for the virtio structures (cfg_type 1-4). */
static inline int vdev_map(struct vdev *v) {
    uint32_t off = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, 0x34, 1) & 0xfc;
    for (int guard = 0; off && guard < 48; guard++) {
        uint32_t id = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, off, 1);
        if (id == 0x09) {
            uint32_t type = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, off + 3, 1);
            uint32_t bar = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, off + 4, 1);
            uint32_t where = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, off + 8, 4);
            volatile uint8_t *p = (volatile uint8_t *)(v->grant.bar_addr[bar] + where);
            if (bar < NOM_PCI_BARS && v->grant.bar_kind[bar] == NOM_BAR_MEM) {
                if (type == 1) v->common = p;
                if (type == 4) v->device_cfg = p;
                if (type == 2) {
                    v->notify_base = p;
                    v->notify_mult = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, off + 16, 4);
                }
            }
        }
        off = (uint32_t)SYS(NOM_SYS_PCI_CONFIG_READ, v->index, off + 1, 1) & 0xfc;
    }
    return v->common && v->device_cfg && v->notify_base ? 0 : -1;
}

#endif
