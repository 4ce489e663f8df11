/*
 * A simulated virtio-net device for host tests of drivers/virtio-net: it implements the
 * driver's platform operations (PCI configuration space with the virtio capabilities, the
 * modern common/notify/device registers in BAR 4, DMA memory whose "physical" address is its
 * host address, a settable clock, MSI-X) and plays the device side of the split virtqueues,
 * including event-index notification suppression, so a test can deliver, complete, reorder or
 * corrupt ring entries one at a time.
 */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "virtio_net.h"

#define SIM_TSC_HZ 1000000000ull /* 1 tick = 1 ns */
#define SIM_RXQ 0
#define SIM_TXQ 1

struct sim_queue {
    uint16_t max, size, msix, enabled;
    uint64_t desc, avail, used;  /* addresses the driver wrote */
    uint16_t last_avail;         /* next available entry the device takes */
    uint16_t used_idx;           /* next used entry the device writes */
    unsigned notifies;           /* kicks received */
    unsigned interrupts;         /* interrupts raised */
};

struct sim {
    struct vnet_platform plat;
    uint8_t pci[256];
    uint8_t status;
    uint32_t dfsel, gfsel;
    uint64_t offered, accepted;
    uint16_t qsel, msix_config, msix_entries, numq;
    struct sim_queue q[2];
    uint8_t mac[6];
    uint16_t net_status;
    uint64_t now;                /* the TSC */
    long live_allocs;            /* DMA blocks not yet freed */
    bool notify_on_drain;        /* set avail_event after taking entries (QEMU waits this way) */
    bool stuck_reset;            /* status never reads back 0 */
    uint8_t rx_hdr_flags;        /* virtio_net_hdr flags sim_rx_frame writes (5.1.6.4) */
    unsigned resets;
};

/* A device offering VERSION_1, MAC, STATUS, EVENT_IDX, CSUM, GUEST_CSUM and offloads the driver
 * must refuse,
 * queue size max `qmax`, MSI-X with 2 entries, irq_attach working. */
void sim_init(struct sim *s, uint16_t qmax);
/* Leaves the platform without irq_attach (poll-only driver). */
void sim_no_irq(struct sim *s);

void sim_advance_us(struct sim *s, uint64_t us);
bool sim_event_idx(const struct sim *s);

/* Device side of queue qi. */
uint16_t sim_avail_count(const struct sim *s, int qi);  /* published, not yet taken */
bool sim_take(struct sim *s, int qi, uint16_t *id);     /* next available descriptor */
uint8_t *sim_buf(const struct sim *s, int qi, uint16_t id, uint32_t *len);
void sim_used(struct sim *s, int qi, uint32_t id, uint32_t len); /* may interrupt */
void sim_set_used_idx(struct sim *s, int qi, uint16_t idx);      /* raw, for corruption */
uint16_t sim_used_event(const struct sim *s, int qi);
uint16_t sim_avail_idx(const struct sim *s, int qi);

/* Convenience: takes one rx buffer and fills it with a header and frame; false if none. */
bool sim_rx_frame(struct sim *s, const void *frame, uint32_t len);
/* Takes every available tx buffer, copies each frame (without header) into out[i] (up to
 * 2048 bytes each, lens[i]) and completes them in order; returns how many. */
unsigned sim_tx_drain(struct sim *s, uint8_t (*out)[2048], uint32_t *lens, unsigned max);

#endif /* SIM_DEVICE_H */
