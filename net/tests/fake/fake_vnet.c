/* fake_vnet.c: the fake driver of fake_vnet.h. Times are TSC, as in the real driver. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nom/time.h>

#include "lwip/inet_chksum.h"

#include "fake_vnet.h"

struct held { uint8_t data[VNET_MTU_FRAME]; uint32_t len; void *cookie; };

struct vnet {
    int wire;
    uint8_t mac[6];
    unsigned ring;
    unsigned rx_slots;            /* ring + ring / 2: the driver's spare buffers too */
    uint32_t w_us;
    struct held *tx, *rx;
    unsigned ntx, nrx;
    unsigned *rxq;                /* the held frames' rx slots, in arrival order */
    uint8_t *rx_state;            /* per rx slot: FREE, HELD (taken, not yet delivered),
                                     DELIVERING (in the callback), KEPT (vnet_rx_keep) */
    unsigned nkept;
    unsigned inflight;            /* flushed, not yet completed: completes at the next poll */
    uint64_t tx_since, rx_since;  /* TSC when the oldest held frame started waiting */
    unsigned lose_every, tx_seen;
    int peer_gone;
    unsigned offloads;            /* VNET_OFFLOAD_*, as if negotiated */
    int leave_partial;            /* leave offloaded checksums partial (fake_vnet.h) */
    /* Zero-copy transmit as the driver's contract has it: a lent frame is copied onto the
     * wire like any other, but its cookie goes back only at the completion (the next poll),
     * so the stack must keep the frame that long. */
    vnet_tx_done_fn tx_done;
    void *tx_done_arg;
    void *lending;                /* the cookie of the frame vnet_tx_enqueue_lent is adding */
    void **flown;                 /* cookies of lent frames flushed, given back at the poll */
    unsigned nflown;
    struct vnet_stats st;
};

struct vnet *fake_vnet_open(int wire, const uint8_t mac[6], unsigned ring)
{
    struct vnet *d = calloc(1, sizeof *d);
    d->wire = wire;
    fcntl(wire, F_SETFL, O_NONBLOCK);
    memcpy(d->mac, mac, 6);
    d->ring = ring ? ring : VNET_DEFAULT_QUEUE_SIZE;
    d->tx = calloc(d->ring, sizeof *d->tx);
    d->flown = calloc(d->ring, sizeof *d->flown);
    d->rx_slots = d->ring + d->ring / 2;
    d->rx = calloc(d->rx_slots, sizeof *d->rx);
    d->rxq = calloc(d->ring, sizeof *d->rxq);
    d->rx_state = calloc(d->rx_slots, 1);
    return d;
}

void fake_vnet_lose_every(struct vnet *d, unsigned n) { d->lose_every = n; }
void fake_vnet_offload(struct vnet *d, unsigned offloads, int leave_partial)
{
    d->offloads = offloads;
    d->leave_partial = leave_partial;
}
unsigned vnet_offloads(const struct vnet *d) { return d->offloads; }
int fake_vnet_peer_gone(const struct vnet *d) { return d->peer_gone; }

static uint64_t w_ticks(const struct vnet *d) { return nom_us_to_tsc(d->w_us); }

/* One notification makes the whole held batch visible to the "device". */
static int tx_flush(struct vnet *d)
{
    unsigned n = d->ntx;
    for (unsigned i = 0; i < n; i++) {
        if (d->tx[i].cookie != NULL) { /* lost or not, the device is done with it at the poll */
            d->flown[d->nflown++] = d->tx[i].cookie;
            d->tx[i].cookie = NULL;
        }
        d->tx_seen++;
        if (d->lose_every && d->tx_seen % d->lose_every == 0)
            continue;
        if (write(d->wire, d->tx[i].data, d->tx[i].len) < 0 && errno != EAGAIN)
            d->peer_gone = 1;
    }
    d->ntx = 0;
    d->inflight += n;
    if (n > 0) {
        d->st.tx_batches++;
        d->st.tx_kicks++;
    }
    return (int)n;
}

/* What a device does with a checksum left to it (virtio 5.1.6.2): the field holds the pseudo
 * header's sum; the ones' complement sum from start to the end replaces it (0 is sent as
 * 0xffff, which UDP needs and TCP does not mind). */
static void complete_csum(struct held *h, const struct vnet_tx_csum *c)
{
    uint16_t sum = inet_chksum(h->data + c->start, (uint16_t)(h->len - c->start));
    if (sum == 0)
        sum = 0xffff;
    memcpy(h->data + c->start + c->offset, &sum, 2);
}

int vnet_tx_enqueue(struct vnet *d, const struct vnet_iov *iov, unsigned iovcnt)
{
    return vnet_tx_enqueue_csum(d, iov, iovcnt, NULL);
}

int vnet_tx_enqueue_csum(struct vnet *d, const struct vnet_iov *iov, unsigned iovcnt,
                         const struct vnet_tx_csum *csum)
{
    struct held *h;
    size_t len = 0;
    if (iovcnt == 0 || iovcnt > VNET_TX_IOV_MAX)
        return -VNET_EINVAL;
    for (unsigned i = 0; i < iovcnt; i++)
        len += iov[i].len;
    if (len == 0 || len > VNET_MTU_FRAME)
        return -VNET_EINVAL;
    if (csum && (!(d->offloads & VNET_OFFLOAD_TX_CSUM) || csum->start + csum->offset + 2u > len))
        return -VNET_EINVAL;
    if (d->ntx + d->inflight >= d->ring) {
        d->st.tx_ring_full++;
        tx_flush(d);
        return -VNET_EAGAIN;
    }
    h = &d->tx[d->ntx];
    h->len = 0;
    h->cookie = d->lending;
    d->lending = NULL;
    for (unsigned i = 0; i < iovcnt; i++) {
        memcpy(h->data + h->len, iov[i].base, iov[i].len);
        h->len += (uint32_t)iov[i].len;
    }
    if (csum) {
        memcpy(h->data + csum->start + csum->offset, &csum->pseudo, 2);
        if (!d->leave_partial)
            complete_csum(h, csum);
    }
    if (d->ntx++ == 0)
        d->tx_since = nom_tsc();
    d->st.tx_packets++;
    d->st.tx_bytes += len;
    if (d->w_us == 0 || d->ntx >= d->ring * 3 / 4)
        tx_flush(d);
    return 0;
}

void vnet_set_tx_done(struct vnet *d, vnet_tx_done_fn fn, void *arg)
{
    d->tx_done = fn;
    d->tx_done_arg = arg;
}

int vnet_tx_enqueue_lent(struct vnet *d, uint8_t *frame, uint64_t phys, uint32_t len,
                         const struct vnet_tx_csum *csum, void *cookie)
{
    if (d->tx_done == NULL || cookie == NULL || phys != (uint64_t)(uintptr_t)frame)
        return -VNET_EINVAL; /* fake_libnom's nom_dma_open: physical is virtual on the host */
    struct vnet_iov iov = { frame, len };
    d->lending = cookie;
    int r = vnet_tx_enqueue_csum(d, &iov, 1, csum);
    d->lending = NULL;
    if (r == 0)
        d->st.tx_lent++;
    return r;
}

/* Every lent frame flushed so far goes back (the "device" completed it). */
static void give_back_flown(struct vnet *d)
{
    while (d->nflown > 0) {
        d->st.tx_returned++;
        d->tx_done(d->tx_done_arg, d->flown[--d->nflown]);
    }
}

int vnet_tx_reap(struct vnet *d)
{
    d->inflight = 0;
    give_back_flown(d);
    return 0;
}

int vnet_tx_commit(struct vnet *d)
{
    if (d->ntx > 0 && (d->w_us == 0 || nom_tsc() - d->tx_since >= w_ticks(d)))
        return tx_flush(d);
    return 0;
}

int vnet_tx_flush(struct vnet *d) { return tx_flush(d); }

/* The cable takes a flushed batch at once: only the frames still held are outstanding. */
int vnet_tx_outstanding(struct vnet *d) { return (int)d->ntx; }

enum { SLOT_FREE, SLOT_HELD, SLOT_DELIVERING, SLOT_KEPT };

/* Zero-copy receive as the driver does it (virtio_net.h): the driver has half a ring of spare
 * buffers, so up to that many slots can be kept while the "device" still has a ring's worth
 * (rx_take takes any free slot, up to a ring of held frames). A release of a slot not kept (a
 * second one) aborts: a test must never pass over a buffer returned twice. */
int vnet_rx_keep(struct vnet *d, const struct vnet_rx_frame *frame)
{
    for (unsigned i = 0; i < d->rx_slots; i++) {
        if (frame->data != d->rx[i].data)
            continue;
        if (d->rx_state[i] != SLOT_DELIVERING)
            return -VNET_EINVAL;
        if (d->nkept >= d->ring / 2)
            return -VNET_EAGAIN;
        d->rx_state[i] = SLOT_KEPT;
        d->nkept++;
        d->st.rx_kept++;
        return (int)i;
    }
    return -VNET_EINVAL;
}

int vnet_rx_release(struct vnet *d, int handle)
{
    if (handle < 0 || (unsigned)handle >= d->rx_slots || d->rx_state[handle] != SLOT_KEPT) {
        fprintf(stderr, "fake_vnet: rx buffer %d released but not kept\n", handle);
        abort();
    }
    d->rx_state[handle] = SLOT_FREE;
    d->nkept--;
    return 0;
}

unsigned vnet_rx_kept(const struct vnet *d) { return d->nkept; }

static int rx_deliver(struct vnet *d, vnet_rx_fn cb, void *arg)
{
    struct vnet_rx_frame f[VNET_DEFAULT_QUEUE_SIZE];
    unsigned n = d->nrx;
    for (unsigned i = 0; i < n; i++) {
        struct held *h = &d->rx[d->rxq[i]];
        f[i].data = h->data;
        f[i].len = h->len;
        f[i].flags = d->offloads & VNET_OFFLOAD_RX_CSUM ? VNET_RX_CSUM_OK : 0;
        d->rx_state[d->rxq[i]] = SLOT_DELIVERING;
    }
    d->nrx = 0;
    if (n > 0) {
        d->st.rx_batches++;
        cb(arg, f, n);
    }
    for (unsigned i = 0; i < n; i++)
        if (d->rx_state[d->rxq[i]] == SLOT_DELIVERING)
            d->rx_state[d->rxq[i]] = SLOT_FREE;
    return (int)n;
}

/* Takes one frame off the wire into the hold; 0 if none. */
static int rx_take(struct vnet *d)
{
    unsigned slot = 0;
    while (slot < d->rx_slots && d->rx_state[slot] != SLOT_FREE)
        slot++;
    if (slot == d->rx_slots)
        return 0; /* every buffer is held or kept: the "device" has none */
    struct held *h = &d->rx[slot];
    ssize_t r = read(d->wire, h->data, sizeof h->data); /* the wire is O_NONBLOCK */
    if (r == 0)
        d->peer_gone = 1;
    if (r <= 0)
        return 0;
    h->len = (uint32_t)r;
    d->rx_state[slot] = SLOT_HELD;
    d->rxq[d->nrx] = slot;
    if (d->nrx++ == 0)
        d->rx_since = nom_tsc();
    d->st.rx_packets++;
    d->st.rx_bytes += (uint64_t)r;
    return 1;
}

int vnet_poll(struct vnet *d, vnet_rx_fn cb, void *arg)
{
    int passed = 0, got = 0;
    d->st.polls++;
    d->inflight = 0; /* reap every transmit completion */
    give_back_flown(d);
    if (d->ntx > 0 && nom_tsc() - d->tx_since >= w_ticks(d))
        tx_flush(d);
    while (d->nrx < d->ring && rx_take(d)) {
        got++;
        if (d->w_us == 0) /* run to completion: each frame alone */
            passed += rx_deliver(d, cb, arg);
        else if (d->nrx >= d->ring * 3 / 4) {
            d->st.rx_hold_full++;
            passed += rx_deliver(d, cb, arg);
        }
    }
    if (got == 0)
        d->st.empty_polls++;
    if (d->nrx > 0 && nom_tsc() - d->rx_since >= w_ticks(d)) {
        passed += rx_deliver(d, cb, arg);
    } else if (d->nrx > 0 && got == 0) { /* the driver's condition (3): nothing more came */
        d->st.rx_drained++;
        passed += rx_deliver(d, cb, arg);
    }
    return passed;
}

int vnet_rx_flush(struct vnet *d, vnet_rx_fn cb, void *arg) { return rx_deliver(d, cb, arg); }

uint64_t vnet_next_deadline(const struct vnet *d)
{
    uint64_t t = 0;
    if (d->ntx > 0)
        t = d->tx_since + w_ticks(d);
    if (d->nrx > 0 && (t == 0 || d->rx_since + w_ticks(d) < t))
        t = d->rx_since + w_ticks(d);
    return t;
}

int vnet_arm(struct vnet *d)
{
    struct pollfd p = { d->wire, POLLIN, 0 };
    d->st.arms++;
    if (d->ntx > 0 || d->nrx > 0 || (poll(&p, 1, 0) == 1 && !d->peer_gone)) {
        d->st.arm_races++;
        return VNET_ARM_BUSY;
    }
    return VNET_ARM_IDLE;
}

void vnet_interrupt(struct vnet *d) { d->st.interrupts++; }

int vnet_set_batching_delay_us(struct vnet *d, uint32_t us)
{
    if (us > VNET_MAX_BATCHING_DELAY_US)
        return -VNET_EINVAL;
    d->w_us = us;
    return 0;
}

uint32_t vnet_batching_delay_us(const struct vnet *d) { return d->w_us; }
void vnet_mac(const struct vnet *d, uint8_t mac[6]) { memcpy(mac, d->mac, 6); }
int vnet_link_up(struct vnet *d) { (void)d; return 1; }
void vnet_stats(const struct vnet *d, struct vnet_stats *out) { *out = d->st; }
uint64_t vnet_features(const struct vnet *d) { (void)d; return 0; }
