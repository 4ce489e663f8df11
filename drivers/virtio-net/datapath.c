/*
 * virtio-net data path with the batching delay W (paper 3.6; contract in virtio_net.h):
 * transmit batches held until the ring is close to full or the oldest frame waited W, received
 * frames held until W passed, the batch threatens the ring, or the caller flushes; lazy
 * transmit reaping; the receive interrupt armed only when the caller goes idle.
 * Every kick goes through kick(), so the counters see each one.
 */
#include "vnet_impl.h"

static void kick(struct vnet *dev, struct virtq *q, uint16_t qidx, uint64_t *counter)
{
    if (virtq_publish(q)) {
        vpci_notify(&dev->t, q, qidx);
        (*counter)++;
    } else {
        dev->st.kicks_suppressed++;
    }
}

/* Counts a batch released at `now` in hist by how much longer than W its oldest frame (held
 * since `since`) waited. Callers pass the time they decided the release by, so that the clock
 * is read once per decision (issue 16). */
static void count_late(const struct vnet *dev, uint64_t *hist, uint64_t since, uint64_t now)
{
    uint64_t held = now - since;
    uint64_t late = held > dev->w_tsc ? held - dev->w_tsc : 0;
    int i = 0;
    while (i < VNET_LATE_BUCKETS - 1 && late >= dev->late_bound_tsc[i])
        i++;
    hist[i]++;
}

/* Gives every buffer the driver holds back to the device (5.1.6.3: device-writable, each big
 * enough for header and a full frame) and notifies it if it waits for buffers. */
void vnet_refill_rx(struct vnet *dev)
{
    int id;
    while ((id = virtq_get_free(&dev->rx)) >= 0)
        virtq_add(&dev->rx, (uint16_t)id,
                  dev->rx_buf_phys + (uint64_t)dev->rx_desc_buf[id] * VNET_BUF_SIZE,
                  VNET_BUF_SIZE, VRING_DESC_F_WRITE);
    if (virtq_pending(&dev->rx))
        kick(dev, &dev->rx, VNET_RXQ, &dev->st.rx_kicks);
}

static int mark_broken(struct vnet *dev)
{
    dev->broken = true;
    return -VNET_EIO;
}

/* ---- transmit ------------------------------------------------------------------------- */

/* Takes back the buffers of frames the device has sent; completions may come in any order.
 * The same checks as virtq_used_next's, but used->idx is read and checked once for all the
 * entries it covers: about 16 instructions an entry instead of 28 (issue 16: copied frames'
 * completions are reaped a ring at a time, lent frames' with every poll that has work). */
static int reap_tx(struct vnet *dev)
{
    struct virtq *q = &dev->tx;
    uint16_t used_idx = *(volatile uint16_t *)&q->used->idx;
    if (used_idx == q->last_used)
        return 0;
    if ((uint16_t)(used_idx - q->last_used) > (uint16_t)(q->published_idx - q->last_used))
        return mark_broken(dev);
    vnet_rmb(); /* read the entries only after seeing idx cover them (spec 2.6.14) */
    for (uint16_t at = q->last_used; at != used_idx; at++) {
        uint32_t id = q->used->ring[at & (q->size - 1)].id;
        if (id >= q->size || !q->owned[id]) { /* out of range, or returned twice */
            dev->st.tx_bad++;
            continue;
        }
        q->owned[id] = 0;
        if (dev->tx_lent_out)
            vnet_tx_return(dev, (uint16_t)id);
        virtq_put_free(q, (uint16_t)id);
    }
    q->last_used = used_idx;
    return 0;
}

/* Makes the whole held batch visible with at most one notification; now: the time of the
 * decision. */
static int flush_tx(struct vnet *dev, uint64_t now)
{
    uint16_t n = virtq_pending(&dev->tx);
    if (n) {
        /* Counted before the kick: the notification's own latency (under TCG the MMIO write
         * waits for QEMU's global lock) is not the batch's hold. */
        count_late(dev, dev->st.tx_late_hist, dev->tx_oldest_tsc, now);
        kick(dev, &dev->tx, VNET_TXQ, &dev->st.tx_kicks);
        dev->st.tx_batches++;
    }
    return n;
}

int vnet_tx_flush(struct vnet *dev)
{
    return dev->broken ? -VNET_EIO : flush_tx(dev, vnet_now(dev));
}

int vnet_tx_outstanding(struct vnet *dev)
{
    if (dev->broken || reap_tx(dev))
        return -VNET_EIO;
    return dev->tx.size - dev->tx.nfree;
}

static bool tx_due(const struct vnet *dev, uint64_t now)
{
    return virtq_pending(&dev->tx) && now - dev->tx_oldest_tsc >= dev->w_tsc;
}

int vnet_tx_commit(struct vnet *dev)
{
    if (dev->broken)
        return -VNET_EIO;
    if (virtq_pending(&dev->tx) == 0)
        return 0; /* nothing held: no clock read (the receive path asks after every frame) */
    uint64_t now = vnet_now(dev);
    return tx_due(dev, now) ? flush_tx(dev, now) : 0;
}

static size_t iov_total(const struct vnet_iov *iov, unsigned iovcnt)
{
    size_t total = 0;
    for (unsigned i = 0; i < iovcnt; i++)
        total += iov[i].len;
    return total;
}

/* The virtio-net header before a frame, GSO_NONE (5.1.6.2): zeroed, or with a checksum left
 * to the device: NEEDS_CSUM, where it starts and lies, and the pseudo header's sum in the
 * frame's field. */
static void write_tx_header(uint8_t *hdr_at, uint8_t *frame, const struct vnet_tx_csum *csum)
{
    struct virtio_net_hdr_v1 *hdr = (struct virtio_net_hdr_v1 *)hdr_at;
    __builtin_memset(hdr_at, 0, VNET_HDR_LEN);
    if (csum) {
        hdr->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
        hdr->csum_start = csum->start;
        hdr->csum_offset = csum->offset;
        __builtin_memcpy(frame + csum->start + csum->offset, &csum->pseudo, 2);
    }
}

/* Copies the frame behind its header into the driver's buffer (the pseudo header's sum goes
 * into our copy: the caller's frame is not written). */
static uint32_t fill_tx_buffer(uint8_t *buf, const struct vnet_iov *iov, unsigned iovcnt,
                               const struct vnet_tx_csum *csum)
{
    uint32_t at = VNET_HDR_LEN;
    for (unsigned i = 0; i < iovcnt; i++) {
        __builtin_memcpy(buf + at, iov[i].base, iov[i].len);
        at += (uint32_t)iov[i].len;
    }
    write_tx_header(buf, buf + VNET_HDR_LEN, csum);
    return at;
}

int vnet_tx_enqueue(struct vnet *dev, const struct vnet_iov *iov, unsigned iovcnt)
{
    return vnet_tx_enqueue_csum(dev, iov, iovcnt, NULL);
}

/* The checks both enqueues make of a frame of len bytes, then a free descriptor: its id, or
 * -VNET_EINVAL, -VNET_EIO, or -VNET_EAGAIN (none free even after reaping; the held batch is
 * flushed so that the ring drains). */
static inline __attribute__((always_inline)) int tx_take_descriptor(struct vnet *dev, size_t len,
                                                                 const struct vnet_tx_csum *csum)
{
    if (len == 0 || len > VNET_MTU_FRAME)
        return -VNET_EINVAL;
    if (csum && (!vnet_has(dev, VIRTIO_NET_F_CSUM)
                 || (size_t)csum->start + csum->offset + 2 > len))
        return -VNET_EINVAL;
    /* Reap only when out of descriptors: reading used->idx touches a line the device writes. */
    if (dev->tx.nfree == 0 && reap_tx(dev))
        return -VNET_EIO;
    int id = virtq_get_free(&dev->tx);
    if (id < 0) {
        flush_tx(dev, vnet_now(dev));
        dev->st.tx_ring_full++;
        return -VNET_EAGAIN;
    }
    return id;
}

/* Adds descriptor id (the frame's header and bytes at phys, used bytes long) to the batch and
 * flushes the batch if W = 0 or it is close to overflowing (paper 3.6): it fills 3/4 of the
 * ring, or no descriptor is left for the next frame (the rest are with the device). Both steps
 * inline in each enqueue: called, they cost about 40 instructions more per frame (issue 16). */
static inline __attribute__((always_inline)) void tx_add(struct vnet *dev, uint16_t id,
                                                          uint64_t phys, uint32_t used,
                                                          size_t len)
{
    uint64_t now = 0; /* read only to start a batch, or to release one */
    if (virtq_pending(&dev->tx) == 0)
        dev->tx_oldest_tsc = now = vnet_now(dev);
    virtq_add(&dev->tx, id, phys, used, 0);
    dev->st.tx_packets++;
    dev->st.tx_bytes += len;
    if (dev->w_us == 0 || virtq_pending(&dev->tx) >= dev->tx_hold_max || dev->tx.nfree == 0)
        flush_tx(dev, now ? now : vnet_now(dev));
}

int vnet_tx_enqueue_csum(struct vnet *dev, const struct vnet_iov *iov, unsigned iovcnt,
                         const struct vnet_tx_csum *csum)
{
    if (dev->broken)
        return -VNET_EIO;
    size_t len = iovcnt && iovcnt <= VNET_TX_IOV_MAX ? iov_total(iov, iovcnt) : 0;
    int id = tx_take_descriptor(dev, len, csum);
    if (id < 0)
        return id;
    uint64_t off = (uint64_t)id * VNET_BUF_SIZE;
    uint32_t used = fill_tx_buffer(dev->tx_buf + off, iov, iovcnt, csum);
    tx_add(dev, (uint16_t)id, dev->tx_buf_phys + off, used, len);
    return 0;
}

void vnet_set_tx_done(struct vnet *dev, vnet_tx_done_fn fn, void *arg)
{
    dev->tx_done = fn;
    dev->tx_done_arg = arg;
}

int vnet_tx_enqueue_lent(struct vnet *dev, uint8_t *frame, uint64_t phys, uint32_t len,
                         const struct vnet_tx_csum *csum, void *cookie)
{
    if (dev->broken)
        return -VNET_EIO;
    if (dev->tx_done == NULL || cookie == NULL || phys < VNET_TX_HEADROOM)
        return -VNET_EINVAL;
    int id = tx_take_descriptor(dev, len, csum);
    if (id < 0)
        return id;
    write_tx_header(frame - VNET_HDR_LEN, frame, csum);
    dev->tx_lent[id] = cookie;
    dev->tx_lent_out++;
    dev->st.tx_lent++;
    tx_add(dev, (uint16_t)id, phys - VNET_HDR_LEN, len + VNET_HDR_LEN, len);
    return 0;
}

/* ---- receive -------------------------------------------------------------------------- */

static void drop_rx(struct vnet *dev, uint16_t id)
{
    dev->st.rx_bad++;
    virtq_put_free(&dev->rx, id);
}

/* A used length must cover the header and an Ethernet header, and fit the buffer we gave and
 * the largest frame we negotiated (no GSO): anything else is a device bug, dropped. */
static bool rx_len_ok(uint32_t len)
{
    return len >= VNET_HDR_LEN + 14 && len <= VNET_HDR_LEN + VNET_MTU_FRAME;
}

/* Moves new used entries into the held batch, checking each. Returns how many frames were
 * added, or -VNET_EIO. */
static int harvest_rx(struct vnet *dev, uint64_t now)
{
    int added = 0;
    uint16_t id;
    uint32_t len;
    while (dev->nheld < dev->rx.size) {
        int r = virtq_used_next(&dev->rx, &id, &len);
        if (r == VIRTQ_EMPTY)
            break;
        if (r == VIRTQ_BROKEN)
            return mark_broken(dev);
        if (r == VIRTQ_BAD_ID) {
            dev->st.rx_bad++;
        } else if (!rx_len_ok(len)) {
            drop_rx(dev, id);
        } else {
            if (dev->nheld == 0)
                dev->rx_oldest_tsc = now;
            dev->held_id[dev->nheld] = id;
            dev->held_len[dev->nheld++] = (uint16_t)(len - VNET_HDR_LEN);
            added++;
        }
    }
    return added;
}

/* VNET_RX_CSUM_OK if the device vouches for the frame's checksum (5.1.6.4): DATA_VALID, or
 * NEEDS_CSUM (a partial checksum from a sender on the host: the data is intact, the field
 * holds only the pseudo header's sum). Trusted only when GUEST_CSUM was negotiated. */
static uint32_t rx_flags(const struct vnet *dev, const uint8_t *buf)
{
    const struct virtio_net_hdr_v1 *hdr = (const struct virtio_net_hdr_v1 *)buf;
    if (!vnet_has(dev, VIRTIO_NET_F_GUEST_CSUM))
        return 0;
    return hdr->flags & (VIRTIO_NET_HDR_F_DATA_VALID | VIRTIO_NET_HDR_F_NEEDS_CSUM)
           ? VNET_RX_CSUM_OK : 0;
}

/* Hands the held frames to cb: all in one call, or one per call for W = 0 (each frame runs to
 * completion before the next), then gives their buffers back to the device. */
static int deliver_rx(struct vnet *dev, vnet_rx_fn cb, void *arg, uint64_t now)
{
    uint16_t n = dev->nheld;
    if (n)
        count_late(dev, dev->st.rx_late_hist, dev->rx_oldest_tsc, now);
    for (uint16_t i = 0; i < n; i++) {
        const uint8_t *buf = dev->rx_buf + (uint64_t)dev->rx_desc_buf[dev->held_id[i]]
                                           * VNET_BUF_SIZE;
        dev->rx_state[dev->held_id[i]] = RX_DELIVERING;
        dev->frames[i].data = buf + VNET_HDR_LEN;
        dev->frames[i].len = dev->held_len[i];
        dev->frames[i].flags = rx_flags(dev, buf);
        dev->st.rx_bytes += dev->held_len[i];
    }
    if (dev->w_us == 0) {
        for (uint16_t i = 0; i < n; i++)
            cb(arg, &dev->frames[i], 1);
        dev->st.rx_batches += n;
    } else if (n) {
        cb(arg, dev->frames, n);
        dev->st.rx_batches++;
    }
    dev->st.rx_packets += n;
    for (uint16_t i = 0; i < n; i++) { /* a kept frame's descriptor holds a spare now */
        uint16_t id = dev->held_id[i];
        dev->rx_state[id] = RX_WITH_RING;
        virtq_put_free(&dev->rx, id);
    }
    dev->nheld = 0;
    vnet_refill_rx(dev);
    return n;
}

/* Zero-copy receive (virtio_net.h): the kept buffer leaves its descriptor, which takes a spare
 * in its place and goes back to the ring as usual after the callback. The buffer comes from
 * where the frame lies; only a frame being delivered now can be kept. The handle is the
 * buffer's index. */
int vnet_rx_keep(struct vnet *dev, const struct vnet_rx_frame *frame)
{
    uint64_t off = (uint64_t)(frame->data - VNET_HDR_LEN - dev->rx_buf);
    uint64_t b = off / VNET_BUF_SIZE;
    if (frame->data < dev->rx_buf + VNET_HDR_LEN || off % VNET_BUF_SIZE || b >= dev->rx_bufs)
        return -VNET_EINVAL;
    uint16_t id = dev->rx_buf_desc[b];
    if (id >= dev->rx.size || dev->rx_state[id] != RX_DELIVERING)
        return -VNET_EINVAL; /* kept already, a spare, or not being delivered */
    if (dev->nspare == 0)
        return -VNET_EAGAIN;
    uint16_t spare = dev->rx_spare[--dev->nspare];
    dev->rx_desc_buf[id] = spare;
    dev->rx_buf_desc[spare] = id;
    dev->rx_buf_desc[b] = RX_BUF_KEPT;
    dev->nkept++;
    dev->st.rx_kept++;
    return (int)b;
}

/* The buffer becomes a spare again: the next keep hands it to a descriptor. */
int vnet_rx_release(struct vnet *dev, int handle)
{
    if (handle < 0 || handle >= dev->rx_bufs || dev->rx_buf_desc[handle] != RX_BUF_KEPT)
        return -VNET_EINVAL;
    dev->rx_buf_desc[handle] = RX_BUF_SPARE;
    dev->rx_spare[dev->nspare++] = (uint16_t)handle;
    dev->nkept--;
    return 0;
}

unsigned vnet_rx_kept(const struct vnet *dev)
{
    return dev->nkept;
}

/* Is the held batch due? Paper 3.6's conditions: (1) the oldest frame waited W; (2) the batch
 * threatens the ring; (3) "there are no additional packets to receive": this poll found no
 * new frame (added == 0), so the device has nothing more for the batch now, and a connection
 * that closed (vnet_rx_flush). Why (3) at an empty poll: a frame is then held only while
 * others keep arriving, which is what batching buys; holding it to W on an idle ring only
 * delays it. The paper's own figures say so: a microsecond of W costs about one of latency
 * in its "single" runs (one hold, the sent one), where holding received frames to W too cost
 * ours two (apps/{memcached,nhttpd,netpipe}/profile/profile.json before this rule). */
static bool rx_due(struct vnet *dev, uint64_t now, int added)
{
    if (dev->nheld == 0)
        return false;
    if (dev->nheld >= dev->rx_hold_max) {
        dev->st.rx_hold_full++;
        return true;
    }
    if (now - dev->rx_oldest_tsc >= dev->w_tsc)
        return true;
    if (added == 0) {
        dev->st.rx_drained++;
        return true;
    }
    return false;
}

/* Nothing to do: no used receive entry, no frame held either way, no buffer waiting to go
 * back to the ring. An idle core polls every turn (libnom's idle poll) and finds this.
 * Transmit completions alone are not work to wake for: lent frames' are reaped with the next
 * poll that has some (before its frames are delivered), every one by an enqueue out of
 * descriptors and by vnet_tx_reap (netloop: before lwIP's timers, whose retransmissions wait
 * for a lent segment to come back). Reaped alone, each cost a whole turn of the caller's loop
 * per frame sent (about 250 instructions per NetPIPE message once lent frames had pbufs to
 * free; issue 16). */
static bool nothing_new(const struct vnet *dev)
{
    return !virtq_has_used(&dev->rx) && dev->nheld == 0 && virtq_pending(&dev->tx) == 0
           && dev->rx.nfree == 0;
}

int vnet_tx_reap(struct vnet *dev)
{
    if (dev->broken || reap_tx(dev))
        return -VNET_EIO;
    return 0;
}

int vnet_poll(struct vnet *dev, vnet_rx_fn cb, void *arg)
{
    if (dev->broken)
        return -VNET_EIO;
    if (nothing_new(dev)) { /* the empty poll's fast path: no clock read, no reaping */
        virtq_irq_off(&dev->rx);
        dev->st.polls++;
        dev->st.empty_polls++;
        return 0;
    }
    uint64_t now = vnet_now(dev);
    dev->st.polls++;
    /* Completions of copied frames wait until descriptors run out (an enqueue reaps then):
     * reaping them per poll was about 40 instructions per nhttpd request. Lent frames go back
     * now, before received frames are delivered: their pbufs hold heap memory, and lwIP's fast
     * retransmission skips a segment the device still has. */
    if (dev->tx_lent_out && reap_tx(dev))
        return -VNET_EIO;
    int added = harvest_rx(dev, now);
    if (added < 0)
        return added;
    virtq_irq_off(&dev->rx); /* poll mode; also keeps used_event out of reach as we advance */
    if (!added)
        dev->st.empty_polls++;
    int delivered = rx_due(dev, now, added) ? deliver_rx(dev, cb, arg, now) : 0;
    /* Buffers of dropped entries go back now, not with the next delivery: a ring's worth of
     * bad entries in a row would otherwise leave the device nothing to receive into. */
    if (!delivered && dev->rx.nfree)
        vnet_refill_rx(dev);
    uint64_t later = vnet_now(dev); /* after the delivery, which may have taken a while */
    if (tx_due(dev, later))
        flush_tx(dev, later);
    return dev->broken ? -VNET_EIO : delivered;
}

int vnet_rx_flush(struct vnet *dev, vnet_rx_fn cb, void *arg)
{
    if (dev->broken)
        return -VNET_EIO;
    uint64_t now = vnet_now(dev);
    int added = harvest_rx(dev, now);
    return added < 0 ? added : deliver_rx(dev, cb, arg, now);
}

uint64_t vnet_next_deadline(const struct vnet *dev)
{
    uint64_t d = 0;
    if (virtq_pending(&dev->tx))
        d = dev->tx_oldest_tsc + dev->w_tsc;
    if (dev->nheld && (!d || dev->rx_oldest_tsc + dev->w_tsc < d))
        d = dev->rx_oldest_tsc + dev->w_tsc;
    return d;
}

/* ---- interrupt and poll modes --------------------------------------------------------- */

/* While frames are held only the batch reaching rx_hold_max needs the core before the
 * deadline, so the interrupt is asked for at that entry, not the next one: frames that would
 * only join the held batch cost no interrupt (an injection under KVM). */
int vnet_arm(struct vnet *dev)
{
    if (dev->broken)
        return -VNET_EIO;
    dev->st.arms++;
    uint16_t skip = dev->nheld && dev->nheld < dev->rx_hold_max
                    ? (uint16_t)(dev->rx_hold_max - dev->nheld - 1) : 0;
    bool waiting = dev->irq ? virtq_irq_on(&dev->rx, skip) : virtq_has_used(&dev->rx);
    if (waiting) {
        dev->st.arm_races++;
        return VNET_ARM_BUSY;
    }
    return dev->irq ? VNET_ARM_IDLE : VNET_ARM_NO_IRQ;
}

void vnet_interrupt(struct vnet *dev)
{
    __atomic_fetch_add(&dev->st.interrupts, 1, __ATOMIC_RELAXED);
}
