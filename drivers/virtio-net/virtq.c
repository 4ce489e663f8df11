/*
 * Split virtqueues (virtio 1.1 spec 2.6): ring memory, descriptor ownership, publishing
 * available entries with event-index notification suppression (2.6.7, 2.6.8), and reading used
 * entries defensively: a used entry naming a descriptor the device does not own is reported,
 * never followed.
 *
 * Every buffer here is one descriptor (no chains, no indirect tables): the network device puts
 * header and frame in one buffer (VERSION_1 implies ANY_LAYOUT, spec 5.1.6.6), so a used id is
 * simply the descriptor index.
 */
#include "vnet_impl.h"

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* Offsets of the three parts inside one allocation; their alignments are spec 2.6 table 2.6.
 * Each part carries the extra u16 event field used with EVENT_IDX (2.6.6, 2.6.8). */
static size_t avail_offset(uint16_t n) { return (size_t)16 * n; }
static size_t used_offset(uint16_t n) { return align_up(avail_offset(n) + 6 + 2u * n, 64); }
static size_t ring_bytes(uint16_t n) { return align_up(used_offset(n) + 6 + 8u * n, 4096); }

static volatile uint16_t *used_event(const struct virtq *q) { return &q->avail->ring[q->size]; }
static volatile uint16_t *avail_event(const struct virtq *q)
{
    return (volatile uint16_t *)&q->used->ring[q->size];
}

/* Allocates the rings (zeroed: no flags, indexes 0) and gives every descriptor to the driver. */
int virtq_init(struct virtq *q, const struct vnet_platform *p, uint16_t size, bool event_idx)
{
    uint64_t phys;
    *q = (struct virtq){ .size = size, .event_idx = event_idx, .mem_size = ring_bytes(size) };
    q->mem = p->dma_alloc(p->ctx, q->mem_size + align_up(3u * size, 4096), &phys);
    if (!q->mem)
        return -VNET_ENOMEM;
    uint8_t *base = q->mem;
    q->desc = (struct vring_desc *)base;
    q->avail = (struct vring_avail *)(base + avail_offset(size));
    q->used = (struct vring_used *)(base + used_offset(size));
    q->desc_phys = phys;
    q->avail_phys = phys + avail_offset(size);
    q->used_phys = phys + used_offset(size);
    /* Driver-private bookkeeping sits in the same allocation, after the rings, on its own
     * pages: the device is never told about it. */
    q->free_ids = (uint16_t *)(base + q->mem_size);
    q->owned = (uint8_t *)(q->free_ids + size);
    for (uint16_t i = 0; i < size; i++)
        q->free_ids[q->nfree++] = (uint16_t)(size - 1 - i);
    return 0;
}

void virtq_fini(struct virtq *q, const struct vnet_platform *p)
{
    if (q->mem)
        p->dma_free(p->ctx, q->mem, q->mem_size + align_up(3u * q->size, 4096));
    q->mem = NULL;
}

/* Makes every added entry visible (spec 2.6.13.3: ring entries before idx) and says whether
 * the device wants a notification: with EVENT_IDX when the new entries cross avail_event
 * (2.6.8.1, vring_need_event), else unless the device set VRING_USED_F_NO_NOTIFY (2.6.7.1).
 * The full barrier orders our idx store before reading the device's suppression state. */
bool virtq_publish(struct virtq *q)
{
    vnet_wmb();
    *(volatile uint16_t *)&q->avail->idx = q->avail_idx;
    q->published_idx = q->avail_idx;
    vnet_mb();
    uint16_t old = q->notified_idx;
    q->notified_idx = q->avail_idx;
    if (q->event_idx)
        return vring_need_event(*avail_event(q), q->avail_idx, old);
    return !(*(volatile uint16_t *)&q->used->flags & VRING_USED_F_NO_NOTIFY);
}

/* Asks the device not to interrupt. With EVENT_IDX the device interrupts only when used->idx
 * passes used_event (2.6.7.2): half the index space ahead cannot be reached before the next
 * refresh, since at most `size` entries are in flight. */
void virtq_irq_off(struct virtq *q)
{
    if (q->event_idx)
        *used_event(q) = (uint16_t)(q->last_used + 0x8000);
    else
        q->avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
}

/* Asks for an interrupt once `skip` more used entries have come (EVENT_IDX; without it, at the
 * next one); returns true if entries are already there, in which case no interrupt may come for
 * them (the race Unikraft's contract closes). */
bool virtq_irq_on(struct virtq *q, uint16_t skip)
{
    if (q->event_idx)
        *used_event(q) = (uint16_t)(q->last_used + skip);
    else
        q->avail->flags = 0;
    vnet_mb();
    return virtq_has_used(q);
}
