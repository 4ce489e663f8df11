/*
 * virtio-net device lifecycle (virtio 1.1 spec 5.1): initialization in the order of 3.1.1,
 * feature negotiation, queue and buffer set-up, reset on close, and the slow-path queries
 * (MAC, link, counters, knobs). The data path is datapath.c.
 */
#include "vnet_impl.h"

/* Features nom asks for (2.2 bit numbers). Mergeable rx buffers are left out: without guest
 * TSO every frame fits one 2 KiB buffer. ACCESS_PLATFORM is accepted when offered: the
 * addresses we give the device are physical (NOM_SYS_VIRT_TO_PHYS), valid behind an IOMMU
 * while the kernel leaves its translation off or maps each owner's frames at their physical
 * addresses. Checksum offload (CSUM, GUEST_CSUM: 5.1.3) when the caller asks: net/ does
 * (lwIP's checksum was 10 % of the guest instructions of a NetPIPE 1 KiB message, issue 16);
 * rawecho, which echoes frames as they came, must not get partial sums. No TSO: CSUM alone
 * obliges the driver to nothing more (5.1.6.2). */
static const uint64_t wanted_features =
    1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_NET_F_MAC | 1ull << VIRTIO_NET_F_STATUS
    | 1ull << VIRTIO_RING_F_EVENT_IDX | 1ull << VIRTIO_F_ACCESS_PLATFORM;
static const uint64_t csum_features = 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_GUEST_CSUM;

static uint64_t us_to_tsc(const struct vnet *dev, uint32_t us)
{
    return (uint64_t)us * dev->plat.tsc_hz / 1000000u;
}

/* 3.1.1 steps 4-6: offer what we want of what the device has; VERSION_1 is required (this is
 * a modern-only driver). -VNET_ENOTSUP if it is missing or FEATURES_OK does not stick. */
static int negotiate(struct vnet *dev, bool csum_offload)
{
    uint64_t offered = vpci_device_features(&dev->t);
    if (!(offered & 1ull << VIRTIO_F_VERSION_1))
        return -VNET_ENOTSUP;
    dev->features = offered & (wanted_features | (csum_offload ? csum_features : 0));
    vpci_set_driver_features(&dev->t, dev->features);
    vpci_add_status(&dev->t, VIRTIO_CONFIG_S_FEATURES_OK);
    return vpci_status(&dev->t) & VIRTIO_CONFIG_S_FEATURES_OK ? 0 : -VNET_ENOTSUP;
}

/* The queue size: what the caller asked, at most what both queues accept, a power of two
 * (2.6: split queue sizes are powers of two). 0 if a queue is missing. */
static uint16_t pick_queue_size(struct vnet *dev, uint16_t asked)
{
    uint16_t max = vpci_queue_max(&dev->t, VNET_RXQ);
    uint16_t txmax = vpci_queue_max(&dev->t, VNET_TXQ);
    if (txmax < max)
        max = txmax;
    uint16_t size = asked;
    while (size > max)
        size >>= 1;
    return size;
}

/* One buffer area per queue. Transmit: descriptor id i owns bytes [i * VNET_BUF_SIZE,
 * +VNET_BUF_SIZE). Receive: rx_bufs buffers; descriptor i starts with buffer i, the rest are
 * spares (vnet_impl.h). */
static int alloc_buffers(struct vnet *dev)
{
    uint16_t size = dev->rx.size;
    dev->rx_bufs = (uint16_t)(size + VNET_RX_SPARES(size));
    dev->rx_buf = dev->plat.dma_alloc(dev->plat.ctx, (size_t)dev->rx_bufs * VNET_BUF_SIZE,
                                      &dev->rx_buf_phys);
    dev->tx_buf = dev->plat.dma_alloc(dev->plat.ctx, (size_t)size * VNET_BUF_SIZE,
                                      &dev->tx_buf_phys);
    if (!dev->rx_buf || !dev->tx_buf)
        return -VNET_ENOMEM;
    for (uint16_t b = 0; b < dev->rx_bufs; b++) {
        if (b < size) {
            dev->rx_desc_buf[b] = b;
            dev->rx_buf_desc[b] = b;
        } else {
            dev->rx_buf_desc[b] = RX_BUF_SPARE;
            dev->rx_spare[dev->nspare++] = b;
        }
    }
    return 0;
}

/* 3.1.1 step 7 for virtio-net (5.1.5): both queues; only receive may interrupt, on MSI-X
 * entry 0. Transmit completions are reaped lazily, so the tx queue gets no vector at all. */
static int setup_queues(struct vnet *dev, uint16_t size)
{
    bool event_idx = vnet_has(dev, VIRTIO_RING_F_EVENT_IDX);
    int err = virtq_init(&dev->rx, &dev->plat, size, event_idx);
    if (!err)
        err = virtq_init(&dev->tx, &dev->plat, size, event_idx);
    if (!err)
        err = alloc_buffers(dev);
    if (err)
        return err;
    uint16_t rx_vec = VIRTIO_MSI_NO_VECTOR, tx_vec = VIRTIO_MSI_NO_VECTOR;
    if (dev->plat.irq_attach && dev->plat.irq_attach(dev->plat.ctx, 0) == 0)
        rx_vec = 0;
    vpci_no_config_irq(&dev->t);
    err = vpci_queue_setup(&dev->t, VNET_RXQ, &dev->rx, &rx_vec);
    if (!err)
        err = vpci_queue_setup(&dev->t, VNET_TXQ, &dev->tx, &tx_vec);
    dev->irq = rx_vec == 0;
    virtq_irq_off(&dev->rx);
    virtq_irq_off(&dev->tx);
    return err;
}

/* The MAC (5.1.4), read until the configuration generation is stable (4.1.4.3.1). */
static void read_mac(struct vnet *dev)
{
    if (!vnet_has(dev, VIRTIO_NET_F_MAC))
        return;
    uint8_t gen;
    do {
        gen = vpci_config_generation(&dev->t);
        for (uint32_t i = 0; i < 6; i++)
            dev->mac[i] = (uint8_t)vpci_config_read(&dev->t, i, 1);
    } while (gen != vpci_config_generation(&dev->t));
}

/* Memory for struct vnet and its per-descriptor and per-buffer arrays, sized once the ring
 * size is known. */
static struct vnet *alloc_self(const struct vnet_platform *plat, uint16_t size)
{
    size_t bufs = (size_t)size + VNET_RX_SPARES(size);
    size_t bytes = sizeof(struct vnet) + (size_t)size * (3 * sizeof(uint16_t)
                                                        + sizeof(struct vnet_rx_frame)
                                                        + sizeof(void *) + 1)
                   + bufs * sizeof(uint16_t) + VNET_RX_SPARES(size) * sizeof(uint16_t);
    uint64_t phys;
    struct vnet *dev = plat->dma_alloc(plat->ctx, bytes, &phys);
    if (!dev)
        return NULL;
    dev->plat = *plat;
    dev->self_size = bytes;
    static const uint32_t bounds_us[VNET_LATE_BUCKETS - 1] = VNET_LATE_BOUNDS_US;
    for (int i = 0; i < VNET_LATE_BUCKETS - 1; i++)
        dev->late_bound_tsc[i] = us_to_tsc(dev, bounds_us[i]);
    dev->frames = (struct vnet_rx_frame *)(dev + 1);
    dev->tx_lent = (void **)(dev->frames + size);
    dev->held_id = (uint16_t *)(dev->tx_lent + size);
    dev->held_len = dev->held_id + size;
    dev->rx_desc_buf = dev->held_len + size;
    dev->rx_buf_desc = dev->rx_desc_buf + size;
    dev->rx_spare = dev->rx_buf_desc + bufs;
    dev->rx_state = (uint8_t *)(dev->rx_spare + VNET_RX_SPARES(size));
    return dev;
}

static void free_all(struct vnet *dev)
{
    const struct vnet_platform p = dev->plat;
    if (dev->rx_buf)
        p.dma_free(p.ctx, dev->rx_buf, (size_t)dev->rx_bufs * VNET_BUF_SIZE);
    if (dev->tx_buf)
        p.dma_free(p.ctx, dev->tx_buf, (size_t)dev->rx.size * VNET_BUF_SIZE);
    virtq_fini(&dev->rx, &p);
    virtq_fini(&dev->tx, &p);
    p.dma_free(p.ctx, dev, dev->self_size);
}

static bool valid_config(const struct vnet_config *cfg)
{
    uint16_t n = cfg->queue_size;
    return n && !(n & (n - 1)) && n <= 32768 /* spec 2.6: power of two, at most 32768 */
           && cfg->batching_delay_us <= VNET_MAX_BATCHING_DELAY_US;
}

/* 3.1.1 in order: reset, ACKNOWLEDGE, DRIVER, features, FEATURES_OK, queues, config,
 * DRIVER_OK; then the receive ring is filled. */
static int init_device(struct vnet *dev, const struct vnet_config *cfg)
{
    int err = vpci_reset(&dev->t);
    if (err)
        return err;
    vpci_add_status(&dev->t, VIRTIO_CONFIG_S_ACKNOWLEDGE);
    vpci_add_status(&dev->t, VIRTIO_CONFIG_S_DRIVER);
    if ((err = negotiate(dev, cfg->csum_offload)))
        return err;
    uint16_t size = pick_queue_size(dev, cfg->queue_size);
    if (size < 2)
        return -VNET_ENODEV;
    if ((err = setup_queues(dev, size)))
        return err;
    read_mac(dev);
    vpci_add_status(&dev->t, VIRTIO_CONFIG_S_DRIVER_OK);
    dev->tx_hold_max = dev->rx_hold_max = (uint16_t)(size - size / 4);
    vnet_refill_rx(dev);
    return 0;
}

int vnet_open(struct vnet **out, const struct vnet_platform *plat, const struct vnet_config *cfg)
{
    struct vnet_config c = cfg ? *cfg : (struct vnet_config){ 0 };
    if (!c.queue_size)
        c.queue_size = VNET_DEFAULT_QUEUE_SIZE;
    if (!valid_config(&c))
        return -VNET_EINVAL;
    struct vnet *dev = alloc_self(plat, c.queue_size);
    if (!dev)
        return -VNET_ENOMEM;
    int err = vpci_find(&dev->t, &dev->plat);
    if (!err) {
        err = init_device(dev, &c);
        if (err) {
            vpci_add_status(&dev->t, VIRTIO_CONFIG_S_FAILED); /* 3.1.1 step "give up" */
            vpci_reset(&dev->t);
        }
    }
    if (err) {
        free_all(dev);
        return err;
    }
    vnet_set_batching_delay_us(dev, c.batching_delay_us);
    *out = dev;
    return 0;
}

/* Reset first: afterwards the device neither reads nor writes our memory (4.1.4.3.2), so
 * freeing it is safe. A device that never finishes its reset is still released: the caller
 * is giving it back to the kernel anyway. */
void vnet_close(struct vnet *dev)
{
    if (!dev)
        return;
    vpci_reset(&dev->t);
    /* The device has stopped reading: every frame still lent (held or in flight) goes back. */
    for (uint16_t id = 0; dev->tx_lent && id < dev->tx.size; id++)
        vnet_tx_return(dev, id);
    free_all(dev);
}

int vnet_set_batching_delay_us(struct vnet *dev, uint32_t us)
{
    if (us > VNET_MAX_BATCHING_DELAY_US)
        return -VNET_EINVAL;
    dev->w_us = us;
    dev->w_tsc = us_to_tsc(dev, us);
    return 0;
}

uint32_t vnet_batching_delay_us(const struct vnet *dev)
{
    return dev->w_us;
}

void vnet_mac(const struct vnet *dev, uint8_t mac[6])
{
    for (int i = 0; i < 6; i++)
        mac[i] = dev->mac[i];
}

/* Reads the device status too (a VM exit, so not on the data path): a device that set
 * NEEDS_RESET (2.1.2) is BROKEN from now on. */
int vnet_link_up(struct vnet *dev)
{
    if (dev->broken || vpci_status(&dev->t) & VIRTIO_CONFIG_S_NEEDS_RESET) {
        dev->broken = true;
        return -VNET_EIO;
    }
    if (!vnet_has(dev, VIRTIO_NET_F_STATUS))
        return 1;
    return vpci_config_read(&dev->t, 6, 2) & VIRTIO_NET_S_LINK_UP ? 1 : 0;
}

void vnet_stats(const struct vnet *dev, struct vnet_stats *out)
{
    *out = dev->st;
    out->interrupts = __atomic_load_n(&dev->st.interrupts, __ATOMIC_RELAXED);
}

uint64_t vnet_features(const struct vnet *dev)
{
    return dev->features;
}

unsigned vnet_offloads(const struct vnet *dev)
{
    return (vnet_has(dev, VIRTIO_NET_F_CSUM) ? VNET_OFFLOAD_TX_CSUM : 0)
           | (vnet_has(dev, VIRTIO_NET_F_GUEST_CSUM) ? VNET_OFFLOAD_RX_CSUM : 0);
}
