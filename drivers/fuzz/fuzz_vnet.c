/* fuzz_vnet.c: libFuzzer harness of the virtio-net driver (drivers/virtio-net) against a
 * device that lies: the simulated device of drivers/tests plays the device side of the rings
 * and the input decides everything it writes. A fresh device per input; the first byte picks
 * the queue size and W, then each op is one byte and its operands:
 *   0  rx: take an rx buffer, fill it with a header and up to 255 frame bytes, return it with
 *      the true length
 *   1  rx lie: take an rx buffer and return it under a fuzzed id and a fuzzed length
 *   2  tx: the driver sends a frame of fuzzed length; the device completes what it took under
 *      fuzzed ids
 *   3  poll (vnet_poll) after the clock moves on a fuzzed number of microseconds
 *   4  raw used->idx of the rx or tx ring set to a fuzzed value (the driver must go BROKEN)
 *   5  interrupt, arm, flush, or a new W
 * The driver must never touch memory it does not own (ASan), must hand up only frames of a
 * legal length (14..VNET_MTU_FRAME bytes), and vnet_close must give every DMA block back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_net.h>

#include "expect.h"
#include "sim_device.h"
#include "virtio_net.h"

#define HDR ((uint32_t)sizeof(struct virtio_net_hdr_v1))

struct input {
    const uint8_t *p;
    size_t left;
};

static uint8_t u8(struct input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

static uint16_t u16(struct input *in) { return (uint16_t)(u8(in) | u8(in) << 8); }
static uint32_t u32(struct input *in) { return u16(in) | (uint32_t)u16(in) << 16; }

static struct sim sim;
static uint64_t frames_seen, bytes_seen;

static void on_rx(void *arg, const struct vnet_rx_frame *frames, unsigned count)
{
    (void)arg;
    EXPECT(count > 0);
    for (unsigned i = 0; i < count; i++) {
        EXPECT(frames[i].len >= 14 && frames[i].len <= VNET_MTU_FRAME);
        uint8_t sum = 0;
        for (uint32_t b = 0; b < frames[i].len; b++) /* every byte handed up is readable */
            sum += frames[i].data[b];
        bytes_seen += sum;
        frames_seen++;
    }
}

static void rx_fill(struct input *in, uint16_t id, uint32_t *written)
{
    uint32_t cap;
    uint8_t *buf = sim_buf(&sim, SIM_RXQ, id, &cap);
    uint32_t n = u8(in);
    struct virtio_net_hdr_v1 hdr = { .num_buffers = 1 };
    EXPECT(cap >= HDR + VNET_MTU_FRAME);
    memcpy(buf, &hdr, HDR);
    for (uint32_t i = 0; i < n; i++)
        buf[HDR + i] = u8(in);
    *written = HDR + n;
}

static void op_tx(struct vnet *dev, struct input *in)
{
    static uint8_t frame[VNET_MTU_FRAME + 1];
    uint32_t len = u16(in) % (VNET_MTU_FRAME + 2); /* 0 and MTU+1 must be refused */
    struct vnet_iov iov = { frame, len };
    int r = vnet_tx_enqueue(dev, &iov, 1);
    EXPECT(r == 0 || r < 0);
    vnet_tx_commit(dev);
    uint16_t id;
    for (unsigned n = u8(in) % 4; n && sim_take(&sim, SIM_TXQ, &id); n--) {
        uint8_t how = u8(in);
        sim_used(&sim, SIM_TXQ, how & 1 ? u16(in) : id, how & 2 ? u32(in) : 0);
    }
}

static void op_misc(struct vnet *dev, struct input *in)
{
    switch (u8(in) % 5) {
    case 0: vnet_interrupt(dev); break;
    case 1: vnet_arm(dev); break;
    case 2: vnet_rx_flush(dev, on_rx, NULL); break;
    case 3: vnet_tx_flush(dev); break;
    default: vnet_set_batching_delay_us(dev, u32(in) % (VNET_MAX_BATCHING_DELAY_US + 2)); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint16_t qsizes[] = { 2, 8, 16, 64, 0 }; /* 0: the default, 256 */
    struct input in = { data, size };
    uint8_t first = u8(&in);
    struct vnet *dev = NULL;
    struct vnet_config cfg = { .queue_size = qsizes[first % 5],
                               .batching_delay_us = first & 0x80 ? 50 : 0 };
    frames_seen = 0;
    sim_init(&sim, 256);
    if (first & 0x40)
        sim_no_irq(&sim);
    EXPECT(vnet_open(&dev, &sim.plat, &cfg) == 0);

    for (unsigned ops = 0; in.left && ops < 512; ops++) {
        uint16_t id;
        uint32_t len;
        switch (u8(&in) % 6) {
        case 0:
            if (sim_take(&sim, SIM_RXQ, &id)) {
                rx_fill(&in, id, &len);
                sim_used(&sim, SIM_RXQ, id, len);
            }
            break;
        case 1:
            if (sim_take(&sim, SIM_RXQ, &id)) {
                rx_fill(&in, id, &len);
                uint16_t lie_id = u16(&in);
                sim_used(&sim, SIM_RXQ, lie_id, u32(&in));
            }
            break;
        case 2: op_tx(dev, &in); break;
        case 3:
            sim_advance_us(&sim, u16(&in));
            vnet_poll(dev, on_rx, NULL);
            break;
        case 4: {
            int qi = u8(&in) & 1;
            sim_set_used_idx(&sim, qi, u16(&in));
            break;
        }
        default: op_misc(dev, &in); break;
        }
    }
    sim_advance_us(&sim, 2000000);
    vnet_poll(dev, on_rx, NULL);
    vnet_rx_flush(dev, on_rx, NULL);

    struct vnet_stats st;
    vnet_stats(dev, &st);
    EXPECT(st.rx_packets == frames_seen); /* every frame counted was handed up, once */
    vnet_close(dev);
    EXPECT(sim.live_allocs == 0);
    return 0;
}
