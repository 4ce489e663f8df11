/*
 * virtio-net driver internals: the index of everything that crosses a file inside
 * drivers/virtio-net (virtq.c: split virtqueues; virtio_pci.c: the modern PCI transport;
 * virtio_net.c: the network device). Not for users of the driver: they include virtio_net.h.
 *
 * Ring structures and constants come from the virtio headers of linux-libc-dev, included
 * through build/drivers/uapi (linux, asm, asm-generic links), so -nostdinc guest builds see
 * no glibc header. All multi-byte ring fields are little-endian (spec 2.4, VERSION_1); the
 * driver runs on x86-64 only, so they are used as they are.
 */
#ifndef NOM_DRIVERS_VNET_IMPL_H
#define NOM_DRIVERS_VNET_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "virtio_net.h"

/* x86-64 orders stores with stores and loads with loads: the release/acquire fences only
 * stop the compiler. Store-then-load (event index checks, spec 2.6.7.1/2.6.8.1) needs mfence. */
#define vnet_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define vnet_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define vnet_mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* ---- virtq.c: one split virtqueue (spec 2.6) ------------------------------------------- */
struct virtq {
    uint16_t size;          /* entries, power of two */
    bool event_idx;         /* VIRTIO_RING_F_EVENT_IDX negotiated */
    struct vring_desc *desc;
    struct vring_avail *avail;
    struct vring_used *used;
    uint64_t desc_phys, avail_phys, used_phys;
    void *mem;              /* the one DMA allocation holding the three parts */
    size_t mem_size;
    uint16_t avail_idx;     /* next avail->ring slot the driver fills (not yet published) */
    uint16_t notified_idx;  /* avail->idx at the last notification check */
    uint16_t last_used;     /* next used->ring entry to read */
    uint16_t published_idx; /* avail->idx as last stored (the device never writes it) */
    uint16_t notify_off;    /* queue_notify_off from the transport */
    uint8_t *owned;         /* per descriptor: 1 while the device owns it */
    uint16_t *free_ids;     /* stack of descriptors the driver holds */
    uint16_t nfree;
};

/* virtq_used_next() results */
enum { VIRTQ_EMPTY = 0, VIRTQ_ENTRY = 1, VIRTQ_BAD_ID = 2, VIRTQ_BROKEN = 3 };

int virtq_init(struct virtq *q, const struct vnet_platform *p, uint16_t size, bool event_idx);
void virtq_fini(struct virtq *q, const struct vnet_platform *p);
bool virtq_publish(struct virtq *q);
void virtq_irq_off(struct virtq *q);
bool virtq_irq_on(struct virtq *q, uint16_t skip);

/* The one-line questions and moves, and the two per-entry steps, inline: the data path asks
 * them about a dozen times per request (virtq_pending alone 13 times per NetPIPE message,
 * virtq_used_next 5, issue 16), where a call cost more than the answer. */

/* A descriptor the driver holds, or -1 if all are with the device or in a held batch. */
static inline int virtq_get_free(struct virtq *q)
{
    return q->nfree ? q->free_ids[--q->nfree] : -1;
}

static inline void virtq_put_free(struct virtq *q, uint16_t id)
{
    q->free_ids[q->nfree++] = id;
}

/* Entries added but not yet published. */
static inline uint16_t virtq_pending(const struct virtq *q)
{
    return (uint16_t)(q->avail_idx - q->published_idx);
}

/* True if the device has returned entries the driver has not read. */
static inline bool virtq_has_used(const struct virtq *q)
{
    return *(volatile uint16_t *)&q->used->idx != q->last_used;
}

/* Fills descriptor id and appends it to the available ring, still invisible to the device
 * until virtq_publish() moves avail->idx (spec 2.6.13). */
static inline void virtq_add(struct virtq *q, uint16_t id, uint64_t addr, uint32_t len,
                             uint16_t flags)
{
    q->desc[id] = (struct vring_desc){ .addr = addr, .len = len, .flags = flags };
    q->avail->ring[q->avail_idx & (q->size - 1)] = id;
    q->avail_idx++;
    q->owned[id] = 1;
}

/*
 * Reads the next used entry. VIRTQ_ENTRY: *id is a descriptor the device owned, now the
 * driver's, *len what the device wrote. VIRTQ_BAD_ID: the entry names a descriptor the device
 * does not own (out of range, or returned twice); it is consumed and must be dropped.
 * VIRTQ_BROKEN: used->idx claims more entries than were ever published, so no entry of this
 * ring can be trusted. VIRTQ_EMPTY: nothing new.
 */
static inline int virtq_used_next(struct virtq *q, uint16_t *id, uint32_t *len)
{
    uint16_t used_idx = *(volatile uint16_t *)&q->used->idx;
    if (used_idx == q->last_used)
        return VIRTQ_EMPTY;
    if ((uint16_t)(used_idx - q->last_used) > (uint16_t)(q->published_idx - q->last_used))
        return VIRTQ_BROKEN;
    vnet_rmb(); /* read the entry only after seeing idx cover it (spec 2.6.14) */
    struct vring_used_elem e = q->used->ring[q->last_used & (q->size - 1)];
    q->last_used++;
    if (e.id >= q->size || !q->owned[e.id])
        return VIRTQ_BAD_ID;
    q->owned[e.id] = 0;
    *id = (uint16_t)e.id;
    *len = e.len;
    return VIRTQ_ENTRY;
}

/* ---- virtio_pci.c: the virtio 1.x modern PCI transport (spec 4.1) ---------------------- */
struct vpci_region {
    uint32_t bar;
    uint64_t off, len;
};

struct vpci {
    const struct vnet_platform *p;
    struct vpci_region common, notify, isr, device;
    uint32_t notify_mult;   /* notify_off_multiplier (spec 4.1.4.4) */
};

int vpci_find(struct vpci *t, const struct vnet_platform *p);
int vpci_reset(struct vpci *t);
uint8_t vpci_status(struct vpci *t);
void vpci_add_status(struct vpci *t, uint8_t bits);
uint64_t vpci_device_features(struct vpci *t);
void vpci_set_driver_features(struct vpci *t, uint64_t features);
uint16_t vpci_queue_max(struct vpci *t, uint16_t qidx);
int vpci_queue_setup(struct vpci *t, uint16_t qidx, struct virtq *q, uint16_t *msix);
void vpci_no_config_irq(struct vpci *t);
uint8_t vpci_config_generation(struct vpci *t);
void vpci_notify(struct vpci *t, const struct virtq *q, uint16_t qidx);
uint32_t vpci_config_read(struct vpci *t, uint32_t off, uint32_t size);

/* ---- virtio_net.c and datapath.c: the network device (spec 5.1) ---------------------------- */
#define VNET_RXQ 0             /* receiveq1 (5.1.2) */
#define VNET_TXQ 1             /* transmitq1 */
#define VNET_BUF_SIZE 2048u    /* one rx or tx buffer: header + frame, two per page */
#define VNET_HDR_LEN ((uint32_t)sizeof(struct virtio_net_hdr_v1)) /* 12 with VERSION_1 (5.1.6) */
_Static_assert(VNET_TX_HEADROOM == sizeof(struct virtio_net_hdr_v1), "a lent frame's headroom");

struct vnet {
    struct vnet_platform plat;
    struct vpci t;
    struct virtq rx, tx;
    uint8_t *rx_buf, *tx_buf;  /* VNET_BUF_SIZE each: tx one per descriptor id, rx rx_bufs */
    void **tx_lent;            /* per tx descriptor: a lent frame's cookie, or NULL (copied) */
    uint16_t tx_lent_out;      /* lent frames not yet given back */
    vnet_tx_done_fn tx_done;   /* gives lent frames back (vnet_set_tx_done) */
    void *tx_done_arg;
    uint64_t rx_buf_phys, tx_buf_phys;
    size_t self_size;          /* this allocation: struct vnet + the held-frame arrays */
    uint64_t features;
    uint8_t mac[6];
    bool broken;
    bool irq;                  /* the receive queue has an MSI-X vector */
    uint32_t w_us;
    uint64_t w_tsc;
    uint16_t tx_hold_max, rx_hold_max; /* "close to full": 3/4 of the ring */
    uint64_t tx_oldest_tsc;    /* when the oldest held tx frame was enqueued */
    uint64_t rx_oldest_tsc;    /* when the oldest held rx frame was first seen */
    uint64_t late_bound_tsc[VNET_LATE_BUCKETS - 1]; /* VNET_LATE_BOUNDS_US in TSC ticks */
    uint16_t nheld;            /* received frames held (paper 3.6), in arrival order: */
    uint16_t *held_id;         /*   their descriptor ids */
    uint16_t *held_len;        /*   their frame lengths (header stripped) */
    uint8_t *rx_state;         /* per rx descriptor: RX_WITH_RING or RX_DELIVERING */
    /* Receive buffers (zero-copy receive, virtio_net.h): the ring's and as many spares again
     * as half the ring. A descriptor holds any buffer; one that is kept hands its descriptor
     * a spare at once, so keeping never takes a descriptor out of the ring. */
    uint16_t rx_bufs;          /* rx.size + VNET_RX_SPARES(rx.size) */
    uint16_t *rx_desc_buf;     /* per rx descriptor: the buffer it holds */
    uint16_t *rx_buf_desc;     /* per rx buffer: its descriptor, or RX_BUF_SPARE / RX_BUF_KEPT */
    uint16_t *rx_spare, nspare; /* the spare buffers (a stack) and how many */
    uint16_t nkept;            /* buffers kept past their callback (vnet_rx_keep) */
    struct vnet_rx_frame *frames; /* scratch for one callback */
    struct vnet_stats st;
};

/* rx_state values: with the device or the driver's free list; lent to the callback now. */
enum { RX_WITH_RING = 0, RX_DELIVERING = 1 };
/* rx_buf_desc values of a buffer no descriptor holds: a spare, or kept by the caller (vnet_rx_keep)
 * until vnet_rx_release. */
enum { RX_BUF_SPARE = 0xffff, RX_BUF_KEPT = 0xfffe };
/* How many spare receive buffers a ring of n descriptors gets: also how many can be kept at
 * once (half the ring: 128 buffers, 256 KiB, for the default ring). */
#define VNET_RX_SPARES(n) ((uint16_t)((n) / 2))

void vnet_refill_rx(struct vnet *dev);

/* Gives descriptor id's lent frame, if it holds one, back to its owner (exactly once: the
 * cookie is forgotten first). */
static inline void vnet_tx_return(struct vnet *dev, uint16_t id)
{
    void *cookie = dev->tx_lent[id];
    if (cookie == NULL)
        return;
    dev->tx_lent[id] = NULL;
    dev->tx_lent_out--;
    dev->st.tx_returned++;
    dev->tx_done(dev->tx_done_arg, cookie);
}

/* Whether the feature bit was negotiated. Inline: the data path asks per frame (checksum
 * offload both ways). */
static inline bool vnet_has(const struct vnet *dev, unsigned bit)
{
    return dev->features >> bit & 1;
}

/* The platform's clock. Inline: the data path reads it up to 9 times a request (issue 16). */
static inline uint64_t vnet_now(const struct vnet *dev)
{
    return dev->plat.tsc(dev->plat.ctx);
}

#endif /* NOM_DRIVERS_VNET_IMPL_H */
