/*
 * Host unit tests of drivers/virtio-net against the simulated device of sim_device.c: a table
 * of named cases, each asking one question. `vnet_test NAME` runs one case and prints
 * "PASS NAME"; `vnet_test --list` prints the names. test_virtio_net.py runs each as a pytest case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "sim_device.h"
#include "virtio_net.h"

#define HDR ((uint32_t)sizeof(struct virtio_net_hdr_v1))

/* ---- helpers -------------------------------------------------------------------------- */

static struct sim sim;

static struct vnet *open_dev(uint16_t qsize, uint32_t w_us)
{
    struct vnet *dev = NULL;
    struct vnet_config cfg = { .queue_size = qsize, .batching_delay_us = w_us };
    CHECK(vnet_open(&dev, &sim.plat, &cfg) == 0);
    return dev;
}

static struct vnet *start(uint16_t qsize, uint32_t w_us)
{
    sim_init(&sim, 256);
    return open_dev(qsize, w_us);
}

static void finish(struct vnet *dev)
{
    vnet_close(dev);
    CHECK(sim.live_allocs == 0);
    CHECK(sim.status == 0);
}

static struct vnet_stats stats(struct vnet *dev)
{
    struct vnet_stats st;
    vnet_stats(dev, &st);
    return st;
}

/* A 60-byte frame whose bytes all read `tag`. */
static uint8_t *frame_of(uint8_t tag)
{
    static uint8_t f[60];
    memset(f, tag, sizeof f);
    return f;
}

/* What the rx callback saw. */
static struct {
    unsigned calls, frames;
    uint8_t tags[4096];
    uint32_t lens[4096], flags[4096];
} seen;

static void record(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    (void)arg;
    seen.calls++;
    for (unsigned i = 0; i < count; i++) {
        seen.tags[seen.frames % 4096] = frames[i].data[0];
        seen.lens[seen.frames % 4096] = frames[i].len;
        seen.flags[seen.frames % 4096] = frames[i].flags;
        seen.frames++;
    }
}

static int poll(struct vnet *dev)
{
    return vnet_poll(dev, record, NULL);
}

static int send(struct vnet *dev, uint8_t tag)
{
    struct vnet_iov iov = { frame_of(tag), 60 };
    return vnet_tx_enqueue(dev, &iov, 1);
}

/* ---- initialization and release ------------------------------------------------------- */

/* Does open negotiate exactly VERSION_1, MAC, STATUS and EVENT_IDX, refusing offloads not
 * asked for, and leave the device live with a full receive ring and only the receive queue on
 * MSI-X? */
static void open_negotiates_features(void)
{
    struct vnet *dev = start(0, 0);
    CHECK(vnet_features(dev) == (1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_NET_F_MAC
                                 | 1ull << VIRTIO_NET_F_STATUS | 1ull << VIRTIO_RING_F_EVENT_IDX));
    CHECK(vnet_offloads(dev) == 0);
    CHECK(sim.status == (VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER
                         | VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK));
    CHECK(sim.q[SIM_RXQ].enabled && sim.q[SIM_TXQ].enabled);
    CHECK(sim.q[SIM_RXQ].size == VNET_DEFAULT_QUEUE_SIZE);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == VNET_DEFAULT_QUEUE_SIZE);
    CHECK(sim.q[SIM_RXQ].notifies == 1);
    CHECK(sim.q[SIM_RXQ].msix == 0 && sim.q[SIM_TXQ].msix == VIRTIO_MSI_NO_VECTOR);
    CHECK(sim.msix_config == VIRTIO_MSI_NO_VECTOR);
    uint8_t mac[6];
    vnet_mac(dev, mac);
    CHECK(memcmp(mac, sim.mac, 6) == 0);
    CHECK(vnet_link_up(dev) == 1);
    finish(dev);
}

/* Is the ring size the largest power of two both the caller and the device accept? */
static void open_caps_queue_size(void)
{
    sim_init(&sim, 100);
    struct vnet *dev = open_dev(256, 0);
    CHECK(sim.q[SIM_RXQ].size == 64 && sim.q[SIM_TXQ].size == 64);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 64);
    finish(dev);
    struct vnet *d2 = NULL;
    struct vnet_config bad = { .queue_size = 100 };
    CHECK(vnet_open(&d2, &sim.plat, &bad) == -VNET_EINVAL);
    struct vnet_config slow = { .batching_delay_us = VNET_MAX_BATCHING_DELAY_US + 1 };
    CHECK(vnet_open(&d2, &sim.plat, &slow) == -VNET_EINVAL);
}

/* Does a device without VERSION_1 fail with ENOTSUP, reset, with nothing leaked? */
static void open_rejects_legacy_device(void)
{
    sim_init(&sim, 256);
    sim.offered &= ~(1ull << VIRTIO_F_VERSION_1);
    struct vnet *dev = NULL;
    CHECK(vnet_open(&dev, &sim.plat, NULL) == -VNET_ENOTSUP);
    CHECK(sim.status == 0 && sim.live_allocs == 0);
}

/* Are a foreign PCI device and a virtio device without a notify capability refused? */
static void open_rejects_wrong_device(void)
{
    struct vnet *dev = NULL;
    sim_init(&sim, 256);
    sim.pci[0] = 0x86; /* vendor 0x1a86 */
    CHECK(vnet_open(&dev, &sim.plat, NULL) == -VNET_ENODEV);
    sim_init(&sim, 256);
    sim.pci[0x71] = 0; /* the list ends before the notify capability */
    CHECK(vnet_open(&dev, &sim.plat, NULL) == -VNET_ENODEV);
    sim_init(&sim, 256);
    sim.pci[0x54] = 7; /* common configuration in a BAR that does not exist */
    CHECK(vnet_open(&dev, &sim.plat, NULL) == -VNET_ENODEV);
    CHECK(sim.live_allocs == 0);
}

/* Does open give up cleanly when the device never completes its reset? */
static void open_fails_on_stuck_reset(void)
{
    sim_init(&sim, 256);
    sim.stuck_reset = true;
    struct vnet *dev = NULL;
    CHECK(vnet_open(&dev, &sim.plat, NULL) == -VNET_EIO);
    CHECK(sim.live_allocs == 0);
}

/* Does close reset the device and free all DMA memory, even with frames held? */
static void close_resets_device(void)
{
    struct vnet *dev = start(16, 40);
    CHECK(send(dev, 1) == 0);
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(poll(dev) == 0);
    unsigned resets = sim.resets;
    finish(dev);
    CHECK(sim.resets == resets + 1);
}

/* ---- transmit ------------------------------------------------------------------------- */

/* With W = 0, is each frame visible and kicked at once, one notification per frame while
 * the device waits for each? */
static void tx_w0_kicks_each_frame(void)
{
    struct vnet *dev = start(16, 0);
    uint8_t out[4][2048];
    uint32_t lens[4];
    for (int i = 0; i < 3; i++) {
        CHECK(send(dev, (uint8_t)i) == 0);
        CHECK(sim.q[SIM_TXQ].notifies == (unsigned)i + 1);
        CHECK(sim_tx_drain(&sim, out, lens, 4) == 1);
        CHECK(lens[0] == 60 && out[0][0] == i);
    }
    CHECK(stats(dev).tx_kicks == 3 && stats(dev).tx_batches == 3);
    finish(dev);
}

/* While the device has not caught up (avail_event not advanced), are kicks suppressed? */
static void tx_kick_suppressed_while_device_busy(void)
{
    struct vnet *dev = start(16, 0);
    CHECK(send(dev, 1) == 0 && send(dev, 2) == 0 && send(dev, 3) == 0);
    CHECK(sim.q[SIM_TXQ].notifies == 1);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 3);
    CHECK(stats(dev).kicks_suppressed >= 2);
    finish(dev);
}

/* Are frames held exactly W µs after the oldest, then sent as one batch with one kick? */
static void tx_batching(uint32_t w)
{
    struct vnet *dev = start(64, w);
    uint64_t t0 = sim.now;
    for (int i = 0; i < 5; i++) {
        CHECK(send(dev, (uint8_t)i) == 0);
        if (i == 2)
            CHECK(vnet_tx_commit(dev) == 0); /* W > 0: held; W = 0: enqueue sent it */
        sim_advance_us(&sim, w / 5);
    }
    if (w) {
        CHECK(sim_avail_count(&sim, SIM_TXQ) == 0 && sim.q[SIM_TXQ].notifies == 0);
        CHECK(vnet_next_deadline(dev) == t0 + (uint64_t)w * 1000);
        sim.now = t0 + (uint64_t)w * 1000 - 1;
        CHECK(poll(dev) == 0 && sim_avail_count(&sim, SIM_TXQ) == 0);
        sim.now++;
        CHECK(poll(dev) == 0);
    }
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 5);
    CHECK(stats(dev).tx_batches == (w ? 1 : 5));
    CHECK(sim.q[SIM_TXQ].notifies == 1); /* the device never caught up: one kick */
    CHECK(vnet_next_deadline(dev) == 0);
    finish(dev);
}
static void tx_batching_w0(void) { tx_batching(0); }
static void tx_batching_w10(void) { tx_batching(10); }
static void tx_batching_w40(void) { tx_batching(40); }

/* Does commit flush a batch whose oldest frame has waited W, without a poll? */
static void tx_commit_flushes_due_batch(void)
{
    struct vnet *dev = start(64, 10);
    CHECK(send(dev, 1) == 0 && vnet_tx_commit(dev) == 0);
    sim_advance_us(&sim, 10);
    CHECK(send(dev, 2) == 0 && vnet_tx_commit(dev) == 2);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 2);
    CHECK(vnet_tx_flush(dev) == 0);
    finish(dev);
}

/* Is a held batch flushed when it reaches 3/4 of the ring, whatever W says? */
static void tx_flush_when_ring_close_to_full(void)
{
    struct vnet *dev = start(16, 40);
    for (int i = 0; i < 11; i++)
        CHECK(send(dev, (uint8_t)i) == 0);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 0);
    CHECK(send(dev, 11) == 0);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 12 && sim.q[SIM_TXQ].notifies == 1);
    finish(dev);
}

/* With frames still in flight, is a smaller batch flushed once it takes the last descriptor? */
static void tx_flush_when_no_descriptor_left(void)
{
    struct vnet *dev = start(16, 0);
    for (int i = 0; i < 8; i++)
        CHECK(send(dev, (uint8_t)i) == 0); /* W = 0: published, never completed */
    CHECK(vnet_set_batching_delay_us(dev, 40) == 0);
    for (int i = 0; i < 7; i++)
        CHECK(send(dev, (uint8_t)(8 + i)) == 0);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 8);
    CHECK(send(dev, 15) == 0);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 16 && vnet_next_deadline(dev) == 0);
    finish(dev);
}

/* When the device completes nothing, does enqueue report a full ring (counted) and recover
 * once completions come back? */
static void tx_ring_full_then_recovers(void)
{
    struct vnet *dev = start(8, 0);
    for (int i = 0; i < 8; i++)
        CHECK(send(dev, (uint8_t)i) == 0);
    CHECK(send(dev, 8) == -VNET_EAGAIN);
    CHECK(stats(dev).tx_ring_full == 1);
    uint8_t out[8][2048];
    uint32_t lens[8];
    CHECK(vnet_tx_outstanding(dev) == 8);
    CHECK(sim_tx_drain(&sim, out, lens, 8) == 8);
    for (int i = 0; i < 8; i++)
        CHECK(out[i][0] == i);
    CHECK(vnet_tx_outstanding(dev) == 0);
    CHECK(send(dev, 9) == 0);
    finish(dev);
}

/* Are completions in any order reclaimed, each buffer holding the right frame? */
static void tx_out_of_order_completions(void)
{
    struct vnet *dev = start(8, 0);
    uint16_t ids[8];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 8; i++)
            CHECK(send(dev, (uint8_t)(round * 8 + i)) == 0);
        for (int i = 0; i < 8; i++) {
            uint32_t len;
            CHECK(sim_take(&sim, SIM_TXQ, &ids[i]));
            CHECK(sim_buf(&sim, SIM_TXQ, ids[i], &len)[HDR] == round * 8 + i);
        }
        static const int order[8] = { 5, 2, 7, 0, 3, 6, 1, 4 };
        for (int i = 0; i < 8; i++)
            sim_used(&sim, SIM_TXQ, ids[order[i]], 0);
    }
    CHECK(stats(dev).tx_bad == 0 && stats(dev).tx_ring_full == 0);
    finish(dev);
}

/* Does the device see a zeroed virtio-net header and the pieces gathered in order? */
static void tx_gathers_pieces_behind_zero_header(void)
{
    struct vnet *dev = start(8, 0);
    uint8_t a[14], b[20], c[100];
    memset(a, 0xaa, sizeof a);
    memset(b, 0xbb, sizeof b);
    memset(c, 0xcc, sizeof c);
    struct vnet_iov iov[3] = { { a, sizeof a }, { b, sizeof b }, { c, sizeof c } };
    CHECK(vnet_tx_enqueue(dev, iov, 3) == 0);
    uint16_t id;
    uint32_t len;
    CHECK(sim_take(&sim, SIM_TXQ, &id));
    uint8_t *buf = sim_buf(&sim, SIM_TXQ, id, &len);
    CHECK(len == HDR + 134);
    for (uint32_t i = 0; i < HDR; i++)
        CHECK(buf[i] == 0);
    CHECK(buf[HDR] == 0xaa && buf[HDR + 13] == 0xaa && buf[HDR + 14] == 0xbb);
    CHECK(buf[HDR + 34] == 0xcc && buf[HDR + 133] == 0xcc);
    CHECK(stats(dev).tx_bytes == 134 && stats(dev).tx_packets == 1);
    finish(dev);
}

/* Are empty, oversized and over-fragmented frames refused without touching the ring? */
static void tx_rejects_bad_frames(void)
{
    struct vnet *dev = start(8, 0);
    static uint8_t big[VNET_MTU_FRAME + 1];
    struct vnet_iov iov[VNET_TX_IOV_MAX + 1];
    for (unsigned i = 0; i <= VNET_TX_IOV_MAX; i++)
        iov[i] = (struct vnet_iov){ big, 1 };
    CHECK(vnet_tx_enqueue(dev, iov, 0) == -VNET_EINVAL);
    CHECK(vnet_tx_enqueue(dev, iov, VNET_TX_IOV_MAX + 1) == -VNET_EINVAL);
    CHECK(vnet_tx_enqueue(dev, iov, VNET_TX_IOV_MAX) == 0);
    iov[0].len = 0;
    CHECK(vnet_tx_enqueue(dev, iov, 1) == -VNET_EINVAL);
    iov[0].len = sizeof big;
    CHECK(vnet_tx_enqueue(dev, iov, 1) == -VNET_EINVAL);
    iov[0].len = VNET_MTU_FRAME;
    CHECK(vnet_tx_enqueue(dev, iov, 1) == 0);
    CHECK(sim_avail_count(&sim, SIM_TXQ) == 2);
    finish(dev);
}

/* ---- zero-copy receive: kept buffers ---------------------------------------------------- */

/* What the keeping callback did: the handles it got, and what vnet_rx_keep said. */
static struct {
    struct vnet *dev;
    int handles[64], results[64];
    unsigned calls;
    const uint8_t *data[64];
} kept;

static void keep_each(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    (void)arg;
    for (unsigned i = 0; i < count && kept.calls < 64; i++, kept.calls++) {
        kept.results[kept.calls] = vnet_rx_keep(kept.dev, &frames[i]);
        kept.handles[kept.calls] = kept.results[kept.calls];
        kept.data[kept.calls] = frames[i].data;
    }
}

static struct vnet *start_keeping(uint16_t qsize)
{
    memset(&kept, 0, sizeof kept);
    kept.dev = start(qsize, 0);
    return kept.dev;
}

/* Does a kept buffer stay unchanged while the ring, full all along (its descriptor took a
 * spare), receives a ring's worth of frames more, and go back exactly once: a second release,
 * or a keep after the callback, is refused? */
static void rx_kept_buffer_returns_once(void)
{
    struct vnet *dev = start_keeping(16); /* 16 descriptors, 8 spare buffers */
    CHECK(sim_rx_frame(&sim, frame_of(0x5a), 60));
    CHECK(vnet_poll(dev, keep_each, NULL) == 1);
    CHECK(kept.calls == 1 && kept.results[0] >= 0 && vnet_rx_kept(dev) == 1);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 16);     /* its descriptor is back, with a spare */
    for (int i = 0; i < 16; i++)
        CHECK(sim_rx_frame(&sim, frame_of(0xee), 60));
    CHECK(poll(dev) == 16 && sim_avail_count(&sim, SIM_RXQ) == 16);
    CHECK(kept.data[0][0] == 0x5a && kept.data[0][59] == 0x5a); /* never given to the device */
    struct vnet_rx_frame late = { kept.data[0], 60, 0 };
    CHECK(vnet_rx_keep(dev, &late) == -VNET_EINVAL);  /* kept already */
    CHECK(vnet_rx_release(dev, kept.handles[0]) == 0);
    CHECK(vnet_rx_kept(dev) == 0);
    CHECK(vnet_rx_release(dev, kept.handles[0]) == -VNET_EINVAL);
    CHECK(vnet_rx_release(dev, -1) == -VNET_EINVAL && vnet_rx_release(dev, 24) == -VNET_EINVAL);
    CHECK(poll(dev) == 0 && sim_avail_count(&sim, SIM_RXQ) == 16);
    CHECK(vnet_rx_keep(dev, &late) == -VNET_EINVAL);  /* a spare, not being delivered */
    CHECK(stats(dev).rx_kept == 1);
    finish(dev);
}

/* Can as many buffers be kept as there are spares (half the ring; -VNET_EAGAIN beyond, those
 * frames go back at once), does the ring stay full meanwhile, and do the kept buffers keep
 * their frames while more arrive? */
static void rx_keep_is_bounded(void)
{
    struct vnet *dev = start_keeping(32); /* 16 spares */
    for (int i = 0; i < 20; i++)
        CHECK(sim_rx_frame(&sim, frame_of((uint8_t)i), 60));
    CHECK(vnet_poll(dev, keep_each, NULL) == 20);
    for (int i = 0; i < 16; i++)
        CHECK(kept.results[i] >= 0);
    for (int i = 16; i < 20; i++)
        CHECK(kept.results[i] == -VNET_EAGAIN);
    CHECK(vnet_rx_kept(dev) == 16 && sim_avail_count(&sim, SIM_RXQ) == 32);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 20; i++)
            CHECK(sim_rx_frame(&sim, frame_of(0xee), 60));
        CHECK(poll(dev) == 20 && sim_avail_count(&sim, SIM_RXQ) == 32);
    }
    for (int i = 0; i < 16; i++) {
        CHECK(kept.data[i][0] == (uint8_t)i && kept.data[i][59] == (uint8_t)i);
        CHECK(vnet_rx_release(dev, kept.handles[i]) == 0);
    }
    CHECK(poll(dev) == 0 && sim_avail_count(&sim, SIM_RXQ) == 32 && vnet_rx_kept(dev) == 0);
    finish(dev);
}

/* The stack may free a frame it kept before the callback returns (a duplicate segment): does
 * its buffer still go back exactly once, the ring ending full and every descriptor once in it? */
static void keep_and_release_at_once(void *arg, const struct vnet_rx_frame *frames,
                                     unsigned count)
{
    (void)arg;
    for (unsigned i = 0; i < count; i++) {
        int h = vnet_rx_keep(kept.dev, &frames[i]);
        CHECK(h >= 0 && vnet_rx_release(kept.dev, h) == 0);
        kept.calls++;
    }
}

static void rx_release_inside_the_callback_returns_once(void)
{
    struct vnet *dev = start_keeping(8);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 3; i++)
            CHECK(sim_rx_frame(&sim, frame_of((uint8_t)i), 60));
        CHECK(vnet_poll(dev, keep_and_release_at_once, NULL) == 3);
        CHECK(sim_avail_count(&sim, SIM_RXQ) == 8 && vnet_rx_kept(dev) == 0);
    }
    uint16_t id, seen_ids = 0;
    while (sim_take(&sim, SIM_RXQ, &id)) {
        CHECK(id < 8 && !(seen_ids & 1u << id)); /* no descriptor twice in the ring */
        seen_ids |= (uint16_t)(1u << id);
    }
    CHECK(seen_ids == 0xff && kept.calls == 12);
    finish(dev);
}

/* A device gone BROKEN while buffers are kept: are they still released (the caller's pbufs die
 * later), and does close free everything? */
static void rx_kept_released_after_broken(void)
{
    struct vnet *dev = start_keeping(8);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(vnet_poll(dev, keep_each, NULL) == 1 && kept.results[0] >= 0);
    sim_set_used_idx(&sim, SIM_RXQ, 1000);
    CHECK(poll(dev) == -VNET_EIO);
    CHECK(vnet_rx_release(dev, kept.handles[0]) == 0 && vnet_rx_kept(dev) == 0);
    finish(dev);
}

/* ---- checksum offload (5.1.6.2, 5.1.6.4) ---------------------------------------------- */

/* A 60-byte frame and a checksum left to the device at bytes 50-51 (TCP's place behind
 * Ethernet and a 20-byte IP header: start 34, offset 16). */
static const struct vnet_tx_csum tcp_csum = { .start = 34, .offset = 16, .pseudo = 0xbeef };

/* A device opened with the checksum offload asked for. */
static struct vnet *start_csum(uint16_t qsize)
{
    struct vnet *dev = NULL;
    struct vnet_config cfg = { .queue_size = qsize, .csum_offload = 1 };
    sim_init(&sim, 256);
    CHECK(vnet_open(&dev, &sim.plat, &cfg) == 0);
    return dev;
}

/* Asked for, are CSUM and GUEST_CSUM negotiated, and nothing else more (TSO, mergeable
 * buffers, the control queue)? */
static void csum_offload_negotiated_when_asked(void)
{
    struct vnet *dev = start_csum(0);
    CHECK(vnet_features(dev) == (1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_NET_F_MAC
                                 | 1ull << VIRTIO_NET_F_STATUS | 1ull << VIRTIO_RING_F_EVENT_IDX
                                 | 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_GUEST_CSUM));
    CHECK(vnet_offloads(dev) == (VNET_OFFLOAD_TX_CSUM | VNET_OFFLOAD_RX_CSUM));
    finish(dev);
}

/* With the offload, does the device see NEEDS_CSUM, where to sum and where to put it, and the
 * pseudo header's sum in the field; a frame without one a zeroed header; and is a field
 * outside the frame refused? */
static void tx_csum_fills_the_header(void)
{
    struct vnet *dev = start_csum(8);
    const uint8_t *frame = frame_of(7);
    struct vnet_iov iov = { frame, 60 };
    CHECK(vnet_tx_enqueue_csum(dev, &iov, 1, &tcp_csum) == 0);
    CHECK(vnet_tx_enqueue_csum(dev, &iov, 1, NULL) == 0);
    struct vnet_tx_csum outside = { .start = 50, .offset = 9 };
    CHECK(vnet_tx_enqueue_csum(dev, &iov, 1, &outside) == -VNET_EINVAL);
    uint16_t id, field;
    uint32_t len;
    CHECK(sim_take(&sim, SIM_TXQ, &id));
    uint8_t *buf = sim_buf(&sim, SIM_TXQ, id, &len);
    struct virtio_net_hdr_v1 hdr;
    memcpy(&hdr, buf, sizeof hdr);
    CHECK(hdr.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM && hdr.gso_type == VIRTIO_NET_HDR_GSO_NONE);
    CHECK(hdr.csum_start == 34 && hdr.csum_offset == 16);
    memcpy(&field, buf + HDR + 50, 2);
    CHECK(field == 0xbeef && buf[HDR + 49] == 7 && buf[HDR + 52] == 7 && len == HDR + 60);
    CHECK(frame[50] == 7 && frame[51] == 7); /* the caller's frame is not written */
    CHECK(sim_take(&sim, SIM_TXQ, &id));
    buf = sim_buf(&sim, SIM_TXQ, id, &len);
    for (uint32_t i = 0; i < HDR; i++)
        CHECK(buf[i] == 0);
    finish(dev);
}

/* ---- zero-copy transmit (lent frames) ------------------------------------------------- */

/* Lent frames live in these buffers: VNET_TX_HEADROOM bytes of room, then a 60-byte frame; the
 * simulated device reads guest memory at its physical address, which is its address here. */
static uint8_t lent_buf[8][VNET_TX_HEADROOM + 60];
static struct {
    unsigned calls;
    void *cookies[64];
} back;

static void record_back(void *arg, void *cookie)
{
    (void)arg;
    back.cookies[back.calls++ % 64] = cookie;
}

static int lend(struct vnet *dev, unsigned i, uint8_t tag, const struct vnet_tx_csum *csum)
{
    uint8_t *frame = lent_buf[i] + VNET_TX_HEADROOM;
    memset(lent_buf[i], 0xee, VNET_TX_HEADROOM); /* the driver must write the whole header */
    memset(frame, tag, 60);
    return vnet_tx_enqueue_lent(dev, frame, (uint64_t)(uintptr_t)frame, 60, csum, lent_buf[i]);
}

/* Does a lent frame reach the device from where it lies (header in the room before it, zeroed
 * without a checksum, one descriptor), and come back through the callback exactly once, only
 * after the device completed it, when its completion is reaped: not by an idle poll (the
 * completion alone is no work to wake for), by vnet_tx_reap or a poll with other work? */
static void tx_lent_frame_comes_back_once_when_sent(void)
{
    struct vnet *dev = start(16, 0);
    memset(&back, 0, sizeof back);
    vnet_set_tx_done(dev, record_back, NULL);
    CHECK(lend(dev, 0, 5, NULL) == 0);
    uint16_t id;
    uint32_t len;
    CHECK(sim_take(&sim, SIM_TXQ, &id));
    uint8_t *buf = sim_buf(&sim, SIM_TXQ, id, &len);
    CHECK(buf == lent_buf[0] && len == VNET_TX_HEADROOM + 60); /* not a copy */
    for (uint32_t i = 0; i < HDR; i++)
        CHECK(buf[i] == 0);
    CHECK(buf[HDR] == 5 && buf[HDR + 59] == 5);
    CHECK(vnet_tx_reap(dev) == 0 && back.calls == 0); /* taken, not completed */
    sim_used(&sim, SIM_TXQ, id, 0);
    CHECK(poll(dev) == 0 && back.calls == 0); /* nothing else new: not reaped */
    CHECK(vnet_tx_reap(dev) == 0);
    CHECK(back.calls == 1 && back.cookies[0] == lent_buf[0]);
    CHECK(vnet_tx_reap(dev) == 0 && poll(dev) == 0 && back.calls == 1);
    CHECK(lend(dev, 1, 6, NULL) == 0 && sim_take(&sim, SIM_TXQ, &id));
    sim_used(&sim, SIM_TXQ, id, 0);
    CHECK(sim_rx_frame(&sim, frame_of(9), 60));
    CHECK(poll(dev) == 1 && back.calls == 2 && back.cookies[1] == lent_buf[1]); /* with work */
    CHECK(stats(dev).tx_lent == 2 && stats(dev).tx_returned == 2 && stats(dev).tx_packets == 2);
    finish(dev);
    CHECK(back.calls == 2); /* close gives back only what is still lent */
}

/* Are frames still lent at close, held in a W batch or in flight with the device, each given
 * back exactly once then, and copied frames not? */
static void tx_lent_frames_come_back_at_close(void)
{
    struct vnet *dev = start(16, 40);
    memset(&back, 0, sizeof back);
    vnet_set_tx_done(dev, record_back, NULL);
    CHECK(lend(dev, 0, 1, NULL) == 0 && lend(dev, 1, 2, NULL) == 0 && send(dev, 3) == 0);
    CHECK(vnet_tx_flush(dev) == 3); /* in flight: published, not completed */
    CHECK(lend(dev, 2, 4, NULL) == 0); /* held in the next batch */
    CHECK(back.calls == 0);
    vnet_close(dev);
    CHECK(back.calls == 3 && sim.live_allocs == 0);
    unsigned seen_mask = 0;
    for (unsigned i = 0; i < 3; i++)
        for (unsigned b = 0; b < 3; b++)
            if (back.cookies[i] == lent_buf[b])
                seen_mask |= 1u << b;
    CHECK(seen_mask == 7);
}

/* Does every refusal lend nothing (no callback, nothing counted): no callback set, no cookie,
 * a bad length, no descriptor left, a broken device? */
static void tx_lent_refusals_lend_nothing(void)
{
    struct vnet *dev = start(2, 40);
    memset(&back, 0, sizeof back);
    CHECK(lend(dev, 0, 1, NULL) == -VNET_EINVAL); /* no callback yet */
    vnet_set_tx_done(dev, record_back, NULL);
    uint8_t *frame = lent_buf[0] + VNET_TX_HEADROOM;
    CHECK(vnet_tx_enqueue_lent(dev, frame, (uintptr_t)frame, 60, NULL, NULL) == -VNET_EINVAL);
    CHECK(vnet_tx_enqueue_lent(dev, frame, (uintptr_t)frame, 0, NULL, frame) == -VNET_EINVAL);
    CHECK(vnet_tx_enqueue_lent(dev, frame, (uintptr_t)frame, VNET_MTU_FRAME + 1, NULL, frame)
          == -VNET_EINVAL);
    CHECK(lend(dev, 0, 1, &tcp_csum) == -VNET_EINVAL); /* offload not negotiated */
    CHECK(lend(dev, 0, 1, NULL) == 0 && lend(dev, 1, 2, NULL) == 0);
    CHECK(lend(dev, 2, 3, NULL) == -VNET_EAGAIN); /* a two-descriptor ring */
    CHECK(stats(dev).tx_lent == 2 && back.calls == 0);
    sim_set_used_idx(&sim, SIM_TXQ, 7); /* more completions than ever published: broken */
    CHECK(vnet_tx_reap(dev) == -VNET_EIO);
    CHECK(lend(dev, 3, 4, NULL) == -VNET_EIO && back.calls == 0);
    vnet_close(dev); /* the two lent before are still lent: back now, once each */
    CHECK(back.calls == 2 && sim.live_allocs == 0 && sim.status == 0);
}

/* With the offload, does a lent frame get NEEDS_CSUM in its header and the pseudo header's sum
 * in its own checksum field (the copy path writes the driver's copy; here there is none)? */
static void tx_lent_csum_written_in_place(void)
{
    struct vnet *dev = start_csum(8);
    memset(&back, 0, sizeof back);
    vnet_set_tx_done(dev, record_back, NULL);
    CHECK(lend(dev, 0, 7, &tcp_csum) == 0);
    struct virtio_net_hdr_v1 hdr;
    memcpy(&hdr, lent_buf[0], sizeof hdr);
    CHECK(hdr.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM && hdr.gso_type == VIRTIO_NET_HDR_GSO_NONE);
    CHECK(hdr.csum_start == 34 && hdr.csum_offset == 16 && hdr.num_buffers == 0);
    uint16_t field;
    memcpy(&field, lent_buf[0] + HDR + 50, 2);
    CHECK(field == 0xbeef && lent_buf[0][HDR + 49] == 7 && lent_buf[0][HDR + 52] == 7);
    finish(dev);
    CHECK(back.calls == 1);
}

/* Does a received frame say the device vouches for its checksum exactly when the header says
 * DATA_VALID or NEEDS_CSUM? */
static void rx_csum_flags_reach_the_callback(void)
{
    struct vnet *dev = start_csum(16);
    memset(&seen, 0, sizeof seen);
    const uint8_t flags[3] = { VIRTIO_NET_HDR_F_DATA_VALID, VIRTIO_NET_HDR_F_NEEDS_CSUM, 0 };
    for (int i = 0; i < 3; i++) {
        sim.rx_hdr_flags = flags[i];
        CHECK(sim_rx_frame(&sim, frame_of((uint8_t)i), 60));
    }
    CHECK(poll(dev) == 3);
    CHECK(seen.flags[0] == VNET_RX_CSUM_OK && seen.flags[1] == VNET_RX_CSUM_OK);
    CHECK(seen.flags[2] == 0);
    finish(dev);
}

/* Not asked for (the driver parameter's default), is neither CSUM nor GUEST_CSUM negotiated,
 * a checksum request refused, and a device's word on received frames ignored? */
static void csum_offload_off_negotiates_neither(void)
{
    struct vnet *dev = start(16, 0);
    CHECK(!(sim.accepted & (1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_GUEST_CSUM)));
    CHECK(vnet_offloads(dev) == 0);
    struct vnet_iov iov = { frame_of(1), 60 };
    CHECK(vnet_tx_enqueue_csum(dev, &iov, 1, &tcp_csum) == -VNET_EINVAL);
    memset(&seen, 0, sizeof seen);
    sim.rx_hdr_flags = VIRTIO_NET_HDR_F_DATA_VALID; /* a device that says it anyway */
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(poll(dev) == 1 && seen.flags[0] == 0);
    finish(dev);
}

/* Are completions naming unknown or already returned descriptors counted and ignored? */
static void tx_ignores_bad_completions(void)
{
    struct vnet *dev = start(8, 0);
    CHECK(send(dev, 1) == 0 && send(dev, 2) == 0 && send(dev, 3) == 0);
    uint16_t id;
    CHECK(sim_take(&sim, SIM_TXQ, &id));
    sim_used(&sim, SIM_TXQ, id, 0);
    sim_used(&sim, SIM_TXQ, id, 0);   /* returned twice */
    CHECK(vnet_tx_reap(dev) == 0);
    CHECK(stats(dev).tx_bad == 1);
    CHECK(sim_take(&sim, SIM_TXQ, &id));
    sim_used(&sim, SIM_TXQ, 4711, 0); /* out of range */
    CHECK(vnet_tx_reap(dev) == 0);
    CHECK(stats(dev).tx_bad == 2);
    finish(dev);
}

/* ---- receive -------------------------------------------------------------------------- */

/* With W = 0, does each frame go up alone, in order, and its buffer straight back? */
static void rx_batching_w0(void)
{
    struct vnet *dev = start(16, 0);
    memset(&seen, 0, sizeof seen);
    for (int i = 0; i < 3; i++)
        CHECK(sim_rx_frame(&sim, frame_of((uint8_t)(10 + i)), 60));
    CHECK(poll(dev) == 3);
    CHECK(seen.calls == 3 && seen.frames == 3);
    CHECK(seen.tags[0] == 10 && seen.tags[1] == 11 && seen.tags[2] == 12 && seen.lens[0] == 60);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 16);
    CHECK(stats(dev).rx_packets == 3 && stats(dev).rx_batches == 3 && stats(dev).rx_bytes == 180);
    finish(dev);
}

/* With W > 0, are frames held until the oldest waited W, then passed up in one call? */
static void rx_batching(uint32_t w)
{
    struct vnet *dev = start(64, w);
    memset(&seen, 0, sizeof seen);
    uint64_t t0 = sim.now;
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(poll(dev) == 0);
    CHECK(vnet_next_deadline(dev) == t0 + (uint64_t)w * 1000);
    sim.now = t0 + (uint64_t)w * 1000 - 1;
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(poll(dev) == 0 && seen.calls == 0);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 62); /* held buffers stay out of the ring */
    sim.now++;
    CHECK(poll(dev) == 2);
    CHECK(seen.calls == 1 && seen.frames == 2 && seen.tags[0] == 1 && seen.tags[1] == 2);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 64);
    CHECK(vnet_next_deadline(dev) == 0);
    finish(dev);
}
static void rx_batching_w10(void) { rx_batching(10); }
static void rx_batching_w40(void) { rx_batching(40); }

/* Does a poll that finds no new frame pass the held ones up before W (paper 3.6, condition
 * 3: no more packets are coming), while frames that keep arriving are held on? */
static void rx_empty_poll_delivers_held(void)
{
    struct vnet *dev = start(64, 40);
    memset(&seen, 0, sizeof seen);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(poll(dev) == 0);
    sim_advance_us(&sim, 5);
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(poll(dev) == 0 && seen.calls == 0); /* one more came: the batch grows */
    sim_advance_us(&sim, 5);
    CHECK(poll(dev) == 2); /* nothing new, 10 us before W */
    CHECK(seen.calls == 1 && seen.tags[0] == 1 && seen.tags[1] == 2);
    CHECK(stats(dev).rx_drained == 1 && stats(dev).rx_late_hist[0] == 1);
    CHECK(vnet_next_deadline(dev) == 0 && sim_avail_count(&sim, SIM_RXQ) == 64);
    finish(dev);
}

/* Does each released batch land in the lateness histogram's bucket of its oldest frame's wait
 * beyond W? */
static void late_histogram_counts_each_batch(void)
{
    struct vnet *dev = start(64, 10);
    memset(&seen, 0, sizeof seen);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60) && poll(dev) == 0);
    sim_advance_us(&sim, 12);                    /* 2 us late: bucket [2, 3), index 2 */
    CHECK(poll(dev) == 1);
    CHECK(send(dev, 1) == 0 && vnet_tx_commit(dev) == 0);
    sim_advance_us(&sim, 47);                    /* 37 us late: bucket [30, 40), index 11 */
    CHECK(vnet_tx_commit(dev) == 1);
    CHECK(vnet_set_batching_delay_us(dev, 0) == 0);
    CHECK(send(dev, 2) == 0);                    /* W = 0: sent at once, bucket [0, 1) */
    struct vnet_stats st = stats(dev);
    uint64_t rx_total = 0, tx_total = 0;
    for (int i = 0; i < VNET_LATE_BUCKETS; i++) {
        rx_total += st.rx_late_hist[i];
        tx_total += st.tx_late_hist[i];
    }
    CHECK(rx_total == st.rx_batches && tx_total == st.tx_batches && tx_total == 2);
    CHECK(st.rx_late_hist[2] == 1 && st.tx_late_hist[11] == 1 && st.tx_late_hist[0] == 1);
    CHECK(vnet_tx_flush(dev) == 0);
    finish(dev);
}

/* Is a held batch released when it reaches 3/4 of the ring, before W passed? */
static void rx_release_when_batch_threatens_ring(void)
{
    struct vnet *dev = start(16, 40);
    memset(&seen, 0, sizeof seen);
    for (int i = 0; i < 11; i++)
        CHECK(sim_rx_frame(&sim, frame_of((uint8_t)i), 60));
    CHECK(poll(dev) == 0);
    CHECK(sim_rx_frame(&sim, frame_of(11), 60));
    CHECK(poll(dev) == 12);
    CHECK(seen.calls == 1 && stats(dev).rx_hold_full == 1);
    finish(dev);
}

/* Does vnet_rx_flush pass held frames up at once (condition 3 of paper 3.6)? */
static void rx_flush_delivers_held(void)
{
    struct vnet *dev = start(16, 40);
    memset(&seen, 0, sizeof seen);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(poll(dev) == 0);
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(vnet_rx_flush(dev, record, NULL) == 2);
    CHECK(seen.frames == 2 && vnet_next_deadline(dev) == 0);
    finish(dev);
}

/* Are frames completed out of order delivered in used-ring order, every buffer reused? */
static void rx_out_of_order_completions(void)
{
    struct vnet *dev = start(8, 0);
    memset(&seen, 0, sizeof seen);
    uint16_t ids[4];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 4; i++)
            CHECK(sim_take(&sim, SIM_RXQ, &ids[i]));
        static const int order[4] = { 2, 0, 3, 1 };
        for (int i = 0; i < 4; i++) {
            uint32_t cap;
            uint8_t *buf = sim_buf(&sim, SIM_RXQ, ids[order[i]], &cap);
            CHECK(cap >= HDR + VNET_MTU_FRAME);
            memset(buf, 0, HDR);
            memset(buf + HDR, 100 + order[i], 60);
            sim_used(&sim, SIM_RXQ, ids[order[i]], HDR + 60);
        }
        CHECK(poll(dev) == 4);
        for (int i = 0; i < 4; i++)
            CHECK(seen.tags[round * 4 + i] == 100 + order[i]);
    }
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 8 && stats(dev).rx_bad == 0);
    finish(dev);
}

/* Are used lengths shorter than a header or longer than the buffer dropped, counted, and
 * their buffers given back? */
static void rx_drops_bad_lengths(void)
{
    struct vnet *dev = start(8, 0);
    memset(&seen, 0, sizeof seen);
    const uint32_t bad[] = { 0, HDR, HDR + 13, HDR + VNET_MTU_FRAME + 1, 5000, 0xffffffffu };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint16_t id;
        CHECK(sim_take(&sim, SIM_RXQ, &id));
        sim_used(&sim, SIM_RXQ, id, bad[i]);
    }
    CHECK(sim_rx_frame(&sim, frame_of(7), 60));
    CHECK(poll(dev) == 1);
    CHECK(seen.frames == 1 && seen.tags[0] == 7);
    CHECK(stats(dev).rx_bad == 6);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 8);
    finish(dev);
}

/* Does a poll that finds only bad entries give their buffers back to the device? (Found by
 * fuzzing, net/fuzz: a ring's worth of runts in a row left the device without a buffer, so no
 * frame could ever arrive again.) */
static void rx_bad_entries_alone_refill(void)
{
    struct vnet *dev = start(8, 0);
    memset(&seen, 0, sizeof seen);
    for (int i = 0; i < 8; i++) {
        uint16_t id;
        CHECK(sim_take(&sim, SIM_RXQ, &id));
        sim_used(&sim, SIM_RXQ, id, HDR + 5);
    }
    CHECK(poll(dev) == 0);
    CHECK(stats(dev).rx_bad == 8);
    CHECK(sim_avail_count(&sim, SIM_RXQ) == 8);
    CHECK(sim_rx_frame(&sim, frame_of(9), 60));
    CHECK(poll(dev) == 1 && seen.frames == 1 && seen.tags[0] == 9);
    finish(dev);
}

/* Are used entries naming unknown or already returned descriptors counted and ignored? */
static void rx_drops_bad_ids(void)
{
    struct vnet *dev = start(8, 0);
    memset(&seen, 0, sizeof seen);
    uint16_t id;
    CHECK(sim_take(&sim, SIM_RXQ, &id));
    sim_used(&sim, SIM_RXQ, 9999, HDR + 60);
    CHECK(sim_rx_frame(&sim, frame_of(3), 60));
    CHECK(poll(dev) == 1);
    uint16_t again;
    CHECK(sim_take(&sim, SIM_RXQ, &again));
    sim_used(&sim, SIM_RXQ, again, HDR + 60);
    sim_used(&sim, SIM_RXQ, again, HDR + 60); /* the same buffer twice */
    CHECK(poll(dev) == 1);
    CHECK(stats(dev).rx_bad == 2 && seen.frames == 2);
    finish(dev);
}

/* Does a used index beyond anything published make the device BROKEN for good, and can it
 * still be closed? */
static void broken_used_index_stops_driver(void)
{
    struct vnet *dev = start(8, 0);
    sim_set_used_idx(&sim, SIM_RXQ, 1000);
    CHECK(poll(dev) == -VNET_EIO);
    CHECK(send(dev, 1) == -VNET_EIO);
    CHECK(vnet_arm(dev) == -VNET_EIO && vnet_tx_commit(dev) == -VNET_EIO);
    CHECK(poll(dev) == -VNET_EIO);
    finish(dev);
}

/* Do the 16-bit ring indexes wrap (65536+ frames through 8-entry rings) without losing or
 * reordering a frame in either direction? */
static void ring_wraparound(void)
{
    struct vnet *dev = start(8, 0);
    memset(&seen, 0, sizeof seen);
    uint8_t out[8][2048];
    uint32_t lens[8];
    for (unsigned i = 0; i < 70000; i++) {
        CHECK(sim_rx_frame(&sim, frame_of((uint8_t)i), 60));
        CHECK(poll(dev) == 1);
        CHECK(seen.tags[i % 4096] == (uint8_t)i);
        CHECK(send(dev, (uint8_t)(i * 3)) == 0);
        CHECK(sim_tx_drain(&sim, out, lens, 8) == 1 && out[0][0] == (uint8_t)(i * 3));
    }
    struct vnet_stats st = stats(dev);
    CHECK(st.rx_packets == 70000 && st.tx_packets == 70000 && st.rx_bad == 0 && st.tx_bad == 0);
    CHECK(sim.q[SIM_RXQ].used_idx == (uint16_t)70000);
    finish(dev);
}

/* ---- interrupts, polling and knobs ---------------------------------------------------- */

/* An empty poll (the idle core's, every turn) takes the fast path: does it still turn the
 * interrupt off after an arm, count itself, and leave a frame that comes next to the next poll
 * (the interrupt stays off: no interrupt for it)? */
static void empty_poll_turns_the_interrupt_off(void)
{
    struct vnet *dev = start(16, 0);
    CHECK(vnet_arm(dev) == VNET_ARM_IDLE);
    CHECK(poll(dev) == 0 && poll(dev) == 0);
    CHECK(stats(dev).polls == 2 && stats(dev).empty_polls == 2);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 0);
    CHECK(poll(dev) == 1 && stats(dev).empty_polls == 2);
    finish(dev);
}

/* Is the rx interrupt off while polling, on after arm, and does arm report frames that are
 * already waiting (so no wake-up is lost)? */
static void arm_closes_the_race(void)
{
    struct vnet *dev = start(16, 0);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 0);
    CHECK(poll(dev) == 1);
    CHECK(vnet_arm(dev) == VNET_ARM_IDLE);
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 1);
    CHECK(sim_rx_frame(&sim, frame_of(3), 60)); /* one interrupt per arm */
    CHECK(sim.q[SIM_RXQ].interrupts == 1);
    vnet_interrupt(dev);
    CHECK(vnet_arm(dev) == VNET_ARM_BUSY && stats(dev).arm_races == 1);
    CHECK(poll(dev) == 2);
    CHECK(sim_rx_frame(&sim, frame_of(4), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 1);
    CHECK(stats(dev).interrupts == 1 && stats(dev).arms == 2);
    finish(dev);
}

/* While frames are held, does the interrupt wait until the batch would threaten the ring,
 * instead of waking the core for every frame that would only be held too? */
static void arm_while_holding_waits_for_the_threshold(void)
{
    struct vnet *dev = start(16, 40);
    memset(&seen, 0, sizeof seen);
    CHECK(sim_rx_frame(&sim, frame_of(0), 60));
    CHECK(poll(dev) == 0 && vnet_arm(dev) == VNET_ARM_IDLE);
    for (int i = 1; i <= 10; i++)
        CHECK(sim_rx_frame(&sim, frame_of((uint8_t)i), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 0);
    CHECK(sim_rx_frame(&sim, frame_of(11), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 1);
    CHECK(poll(dev) == 12 && seen.calls == 1 && stats(dev).rx_hold_full == 1);
    finish(dev);
}

/* Without an interrupt route does the driver run poll-only and say so? */
static void arm_without_irq(void)
{
    sim_init(&sim, 256);
    sim_no_irq(&sim);
    struct vnet *dev = open_dev(16, 0);
    CHECK(sim.q[SIM_RXQ].msix == VIRTIO_MSI_NO_VECTOR);
    CHECK(vnet_arm(dev) == VNET_ARM_NO_IRQ);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(vnet_arm(dev) == VNET_ARM_BUSY);
    finish(dev);
}

/* Without EVENT_IDX, do the ring flags suppress kicks and interrupts instead? */
static void no_event_idx_uses_flags(void)
{
    sim_init(&sim, 256);
    sim.offered &= ~(1ull << VIRTIO_RING_F_EVENT_IDX);
    struct vnet *dev = open_dev(16, 0);
    CHECK(!(vnet_features(dev) >> VIRTIO_RING_F_EVENT_IDX & 1));
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 0);
    CHECK(poll(dev) == 1 && vnet_arm(dev) == VNET_ARM_IDLE);
    CHECK(sim_rx_frame(&sim, frame_of(2), 60));
    CHECK(sim.q[SIM_RXQ].interrupts == 1);
    CHECK(send(dev, 1) == 0 && sim.q[SIM_TXQ].notifies == 1);
    struct vring_used *u = (struct vring_used *)(uintptr_t)sim.q[SIM_TXQ].used;
    u->flags = VRING_USED_F_NO_NOTIFY;
    CHECK(send(dev, 2) == 0 && sim.q[SIM_TXQ].notifies == 1);
    finish(dev);
}

/* Does link status follow the device, and does NEEDS_RESET make the device BROKEN? */
static void link_status_and_needs_reset(void)
{
    struct vnet *dev = start(16, 0);
    sim.net_status = 0;
    CHECK(vnet_link_up(dev) == 0);
    sim.net_status = VIRTIO_NET_S_LINK_UP;
    CHECK(vnet_link_up(dev) == 1);
    sim.status |= VIRTIO_CONFIG_S_NEEDS_RESET;
    CHECK(vnet_link_up(dev) == -VNET_EIO);
    CHECK(poll(dev) == -VNET_EIO);
    finish(dev);
}

/* Is W settable at run time, bounded, and does lowering it release what is held? */
static void batching_delay_is_a_runtime_knob(void)
{
    struct vnet *dev = start(16, 40);
    memset(&seen, 0, sizeof seen);
    CHECK(vnet_set_batching_delay_us(dev, VNET_MAX_BATCHING_DELAY_US + 1) == -VNET_EINVAL);
    CHECK(vnet_batching_delay_us(dev) == 40);
    CHECK(sim_rx_frame(&sim, frame_of(1), 60));
    CHECK(send(dev, 1) == 0);
    CHECK(poll(dev) == 0 && sim_avail_count(&sim, SIM_TXQ) == 0);
    CHECK(vnet_set_batching_delay_us(dev, 0) == 0 && vnet_batching_delay_us(dev) == 0);
    CHECK(poll(dev) == 1 && sim_avail_count(&sim, SIM_TXQ) == 1);
    finish(dev);
}

/* ---- the table ------------------------------------------------------------------------ */

#define CASE(fn) { #fn, fn }
static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    CASE(open_negotiates_features),
    CASE(open_caps_queue_size),
    CASE(open_rejects_legacy_device),
    CASE(open_rejects_wrong_device),
    CASE(open_fails_on_stuck_reset),
    CASE(close_resets_device),
    CASE(tx_w0_kicks_each_frame),
    CASE(tx_kick_suppressed_while_device_busy),
    CASE(tx_batching_w0),
    CASE(tx_batching_w10),
    CASE(tx_batching_w40),
    CASE(tx_commit_flushes_due_batch),
    CASE(tx_flush_when_ring_close_to_full),
    CASE(tx_flush_when_no_descriptor_left),
    CASE(tx_ring_full_then_recovers),
    CASE(tx_out_of_order_completions),
    CASE(tx_gathers_pieces_behind_zero_header),
    CASE(tx_rejects_bad_frames),
    CASE(tx_ignores_bad_completions),
    CASE(rx_kept_buffer_returns_once),
    CASE(rx_keep_is_bounded),
    CASE(rx_kept_released_after_broken),
    CASE(rx_release_inside_the_callback_returns_once),
    CASE(csum_offload_negotiated_when_asked),
    CASE(tx_csum_fills_the_header),
    CASE(tx_lent_frame_comes_back_once_when_sent),
    CASE(tx_lent_frames_come_back_at_close),
    CASE(tx_lent_refusals_lend_nothing),
    CASE(tx_lent_csum_written_in_place),
    CASE(rx_csum_flags_reach_the_callback),
    CASE(csum_offload_off_negotiates_neither),
    CASE(rx_batching_w0),
    CASE(rx_batching_w10),
    CASE(rx_batching_w40),
    CASE(rx_empty_poll_delivers_held),
    CASE(late_histogram_counts_each_batch),
    CASE(rx_release_when_batch_threatens_ring),
    CASE(rx_flush_delivers_held),
    CASE(rx_out_of_order_completions),
    CASE(rx_drops_bad_lengths),
    CASE(rx_bad_entries_alone_refill),
    CASE(rx_drops_bad_ids),
    CASE(broken_used_index_stops_driver),
    CASE(ring_wraparound),
    CASE(empty_poll_turns_the_interrupt_off),
    CASE(arm_closes_the_race),
    CASE(arm_while_holding_waits_for_the_threshold),
    CASE(arm_without_irq),
    CASE(no_event_idx_uses_flags),
    CASE(link_status_and_needs_reset),
    CASE(batching_delay_is_a_runtime_knob),
};

int main(int argc, char **argv)
{
    unsigned n = sizeof cases / sizeof cases[0];
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (unsigned i = 0; i < n; i++)
            puts(cases[i].name);
        return 0;
    }
    for (unsigned i = 0; argc == 2 && i < n; i++) {
        if (strcmp(argv[1], cases[i].name) == 0) {
            CHECK_RUN(cases[i].name, cases[i].fn());
            return failures != 0;
        }
    }
    fprintf(stderr, "usage: %s --list | CASE\n", argv[0]);
    return 2;
}
