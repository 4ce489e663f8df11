/*
 * virtio-net on nom: binds the platform-independent driver (virtio_net.h) to a nom application.
 *
 * vnet_nom_open() finds a virtio 1.x network device on the bulletin board (PCI 1af4:1041, or
 * the transitional 1af4:1000), acquires it (NOM_SYS_DEVICE_ACQUIRE maps its BARs), routes its
 * MSI-X entry 0 to an upcall that calls vnet_interrupt(), and runs vnet_open() with DMA memory
 * from libnom (trusted mode, paper 3.5) and time from the TSC. vnet_nom_close() runs
 * vnet_close() (device reset) and then releases the device to the kernel.
 * The caller drives the device as virtio_net.h says, from libnom's scheduler: an idle hook
 * whose poll runs vnet_poll() and whose arm runs vnet_arm() (non-zero for VNET_ARM_BUSY), and a
 * libnom timer at vnet_next_deadline(). Do not call NOM_SYS_BLOCK directly after vnet_arm():
 * the interrupt's upcall may come in between and the block would then sleep through it
 * (one interrupt per arm, spec 2.6.7.2); libnom blocks with upcalls held, which is safe.
 */
#ifndef NOM_DRIVERS_VNET_NOM_H
#define NOM_DRIVERS_VNET_NOM_H

#include "virtio_net.h"

/* Acquires bulletin-board device `bb_index`, or the first free virtio-net device if it is
 * negative, and opens it. Errors: -VNET_ENODEV (no such free virtio-net device, or the kernel
 * refused to grant it), and every error of vnet_open(). */
int vnet_nom_open(struct vnet **out, int bb_index, const struct vnet_config *cfg);

/* The bulletin-board index of an open device (for reports). */
int vnet_nom_bb_index(const struct vnet *dev);

/* vnet_close() then releases the device to the kernel. NULL is ignored. */
void vnet_nom_close(struct vnet *dev);

#endif /* NOM_DRIVERS_VNET_NOM_H */
