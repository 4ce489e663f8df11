/*
 * virtio-net driver: the public interface of nom's userspace virtio-net driver (ring 3).
 *
 * One `struct vnet` drives one virtio 1.x network device through the modern PCI transport
 * (virtio 1.1 spec 4.1) with one receive and one transmit split virtqueue (2.6). The driver
 * runs inside the application that owns the device; it never makes a system call itself: every
 * platform service (device registers, DMA memory, time, interrupts) comes through the small
 * `struct vnet_platform` below, so the same code runs in a nom application (vnet_nom.h) and in
 * host unit tests whose test plays the device.
 *
 * Device states and call order:
 *   CLOSED --vnet_open()--> RUNNING --(device misbehaves or asks for reset)--> BROKEN
 *   RUNNING or BROKEN --vnet_close()--> CLOSED (the device is reset, memory freed).
 *   vnet_open() performs the whole initialization of spec 3.1.1 and leaves the device live
 *   (DRIVER_OK) with its receive ring full of buffers. In BROKEN every data-path call fails with
 *   -VNET_EIO and nothing touches the rings again; only vnet_close() is useful.
 *
 * Threading: a `struct vnet` is not thread-safe. One thread at a time calls everything except
 * vnet_interrupt(), which an interrupt (upcall) handler may call at any time.
 *
 * The batching delay W (paper 3.6, DESIGN.md "The data path and the batching delay"):
 *   - W = 0: run to completion. vnet_tx_commit() hands every enqueued frame to the device at
 *     once; vnet_poll() passes each received frame to the callback as soon as it is seen, one
 *     frame per call.
 *   - W > 0, transmit: the stack hands the driver small batches (vnet_tx_enqueue() per frame,
 *     vnet_tx_commit() per batch). The driver holds them in one large batch, invisible to the
 *     device, and makes the large batch visible with one notification ("kick") when the ring is
 *     close to full (the held frames reach 3/4 of the ring, or no free descriptor is left) or
 *     when the oldest held frame has waited W µs. Only vnet_tx_commit() and vnet_poll() check
 *     the clock: the caller must call vnet_poll() by vnet_next_deadline().
 *   - W > 0, receive: frames the device returned are held in the driver until (1) the oldest
 *     has waited W µs, (2) the held frames reach 3/4 of the ring (they are not yet given back to
 *     the device, so more would starve it), or (3) no more packets are coming: a vnet_poll() found
 *     no new frame (the device has nothing more for the batch now), or the caller says so
 *     (vnet_rx_flush(), e.g. a connection closed). Then all held frames go to the callback in
 *     one call, in arrival order. So a frame waits only while others keep arriving.
 *   - The time a received frame starts waiting is the vnet_poll() that first saw it.
 *
 * Interrupt and poll modes (Unikraft's rx contract): the receive interrupt is off while the
 * caller polls; when to stop polling is the caller's policy (on nom: libnom's idle hooks, knob
 * nom_sched_set_idle_poll_us). A caller that finds nothing to do calls vnet_arm(): it turns
 * the receive interrupt on and reports whether work is already waiting, which closes the race
 * between "ring empty" and "interrupt on". On VNET_ARM_BUSY the caller polls again instead of
 * blocking; on VNET_ARM_IDLE it may block until the interrupt or vnet_next_deadline(), with
 * interrupt delivery held between the arm and the block (see vnet_nom.h). The next vnet_poll()
 * turns the interrupt off again. Transmit completions never interrupt: they are reaped lazily
 * by vnet_tx_enqueue*() when out of descriptors and by vnet_tx_reap(), and lent frames' (see
 * "Zero-copy transmit") also by a vnet_poll() that has other work (Solo5 reaps lazily too).
 * Notifications in both directions use the event index (spec 2.6.7, 2.6.8), so a kick or an
 * interrupt (a VM exit or an injection under KVM) happens only when the other side asked for it.
 *
 * Buffers: the driver owns all DMA memory. vnet_tx_enqueue() copies the frame (gathered from up
 * to VNET_TX_IOV_MAX pieces) into the driver's own transmit buffer, so the caller may reuse its
 * buffers as soon as the call returns: one descriptor per frame, and the stack's buffers are
 * not pinned for W µs or until the device completes. Received frames are lent to the callback
 * and valid only until it returns (unless kept: "Zero-copy receive"); their buffers then go
 * back to the device.
 *
 * Zero-copy transmit: a caller whose frame already lies in device-reachable memory, physically
 * contiguous together with VNET_TX_HEADROOM bytes before it, may lend it instead
 * (vnet_tx_enqueue_lent): the driver writes the virtio-net header into that headroom, the
 * device reads header and frame through one descriptor, and the caller gets the frame back
 * through the callback set with vnet_set_tx_done, exactly once: when its completion is reaped
 * (see "Transmit completions" above: a caller that waits for a frame, e.g. to retransmit it,
 * calls vnet_tx_reap first), or at vnet_close() for a frame still held or in flight. Until
 * then the caller must neither write nor free it. A call that fails lends nothing.
 *
 * Zero-copy receive: instead of copying a frame in the callback, the caller may keep its
 * buffer (vnet_rx_keep) and give it back later (vnet_rx_release, exactly once). The driver
 * has spare buffers, as many as half the ring: a kept buffer's descriptor takes a spare and
 * goes back to the ring, so the device keeps the whole ring however many are kept, and at most
 * as many as there are spares can be kept at once (-VNET_EAGAIN beyond: copy then).
 * vnet_close() frees kept buffers with everything else: the caller must not touch them after
 * it.
 *
 * Checksum offload (spec 5.1.6.2, 5.1.6.4; asked for with vnet_config.csum_offload, since a
 * caller that asks must honour what follows): when the device offers VIRTIO_NET_F_CSUM the
 * caller may leave a TCP/UDP checksum to the device
 * (vnet_tx_enqueue_csum); when it offers VIRTIO_NET_F_GUEST_CSUM, received frames whose
 * checksum the device vouches for (DATA_VALID, or NEEDS_CSUM: a local sender's partial
 * checksum, its data intact) say so (VNET_RX_CSUM_OK) and the caller need not check them;
 * other frames it must check as usual, and frames with NEEDS_CSUM carry only a partial sum in
 * their checksum field (echoing one back unchanged sends a bad checksum). vnet_offloads()
 * says what was negotiated.
 *
 * Errors are negative `enum vnet_error` values; 0 (or a count) is success.
 */
#ifndef NOM_DRIVERS_VIRTIO_NET_H
#define NOM_DRIVERS_VIRTIO_NET_H

#include <stddef.h>
#include <stdint.h>

enum vnet_error {
    VNET_EINVAL = 1, /* bad argument: frame empty or larger than VNET_MTU_FRAME, bad config */
    VNET_ENODEV = 2, /* not a virtio 1.x network device, or its PCI capabilities are missing */
    VNET_ENOTSUP = 3,/* the device refused the features the driver needs (VERSION_1) */
    VNET_ENOMEM = 4, /* the platform could not allocate (DMA) memory */
    VNET_EAGAIN = 5, /* transmit ring full: poll (reaps completions) and retry */
    VNET_EIO = 6,    /* device BROKEN: it asked for a reset or returned impossible ring state */
};

/* Largest Ethernet frame (no FCS) the driver moves: 1514 bytes plus one 802.1Q tag. */
#define VNET_MTU_FRAME 1518u
/* Most pieces one transmitted frame may be gathered from. */
#define VNET_TX_IOV_MAX 16u
/* The ring size the driver asks for when the config says 0 (the device may offer less). */
#define VNET_DEFAULT_QUEUE_SIZE 256u
/* Largest batching delay accepted (paper section 6 sweeps 0-40 µs). */
#define VNET_MAX_BATCHING_DELAY_US 1000000u

/*
 * Everything the driver needs from its platform. All functions are called from the thread
 * that calls the driver, never from vnet_interrupt().
 */
struct vnet_platform {
    void *ctx; /* passed back to every function */
    /* Reads `size` (1, 2 or 4) bytes of the device's PCI configuration space at `off`. */
    uint32_t (*pci_read)(void *ctx, uint32_t off, uint32_t size);
    /* Size in bytes of memory BAR `bar` as mapped for the driver, 0 if not a mapped memory BAR. */
    uint64_t (*bar_size)(void *ctx, uint32_t bar);
    /* Reads/writes `size` (1, 2 or 4) bytes of register space at `off` inside memory BAR
     * `bar`, naturally aligned, as one uncached access (spec 4.1.3.1). */
    uint32_t (*bar_read)(void *ctx, uint32_t bar, uint64_t off, uint32_t size);
    void (*bar_write)(void *ctx, uint32_t bar, uint64_t off, uint32_t size, uint32_t value);
    /* Returns `size` bytes of zeroed memory, 4096-byte aligned, physically contiguous, and its
     * device-visible (physical) address in *phys; NULL if out of memory. */
    void *(*dma_alloc)(void *ctx, size_t size, uint64_t *phys);
    void (*dma_free)(void *ctx, void *mem, size_t size);
    /* Current time-stamp counter; tsc_hz is its frequency (invariant TSC). */
    uint64_t (*tsc)(void *ctx);
    uint64_t tsc_hz;
    /* Routes MSI-X table entry `entry` of the device to this driver's interrupt handler (which
     * calls vnet_interrupt()); 0 on success. NULL or failure: the driver runs poll-only and
     * vnet_arm() reports VNET_ARM_NO_IRQ. */
    int (*irq_attach)(void *ctx, uint32_t entry);
};

struct vnet_config {
    uint16_t queue_size;         /* per virtqueue, power of two; 0: VNET_DEFAULT_QUEUE_SIZE */
    uint32_t batching_delay_us;  /* initial W, see vnet_set_batching_delay_us() */
    uint8_t csum_offload;        /* 1: negotiate VIRTIO_NET_F_CSUM and GUEST_CSUM if offered */
};

/* Counters: monotonic since vnet_open(). A "batch" is one hand-over: one vnet_tx flush that
 * made >= 1 frame visible to the device, or one rx callback invocation. */
#define VNET_LATE_BUCKETS 21
#define VNET_LATE_BOUNDS_US \
    { 1, 2, 3, 4, 5, 7, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000 }

struct vnet_stats {
    uint64_t rx_packets, rx_bytes, rx_batches;
    uint64_t tx_packets, tx_bytes, tx_batches;
    uint64_t tx_kicks, rx_kicks;  /* notifications written to the device (VM exits) */
    uint64_t kicks_suppressed;    /* notifications the event index let the driver skip */
    uint64_t interrupts;          /* vnet_interrupt() calls */
    uint64_t polls, empty_polls;  /* vnet_poll() calls, and those that found nothing new */
    uint64_t arms, arm_races;     /* vnet_arm() calls, and those that found work waiting */
    uint64_t tx_ring_full;        /* vnet_tx_enqueue() returned -VNET_EAGAIN */
    uint64_t rx_hold_full;        /* rx batches released because they threatened the ring */
    uint64_t rx_drained;          /* rx batches released before W by a poll that found no new
                                   * frame (paper 3.6, condition 3) */
    uint64_t rx_bad;              /* used rx entries dropped: unknown id, bad length */
    uint64_t tx_bad;              /* used tx entries ignored: unknown or not outstanding id */
    uint64_t rx_kept;             /* received buffers kept past their callback (vnet_rx_keep) */
    uint64_t tx_lent, tx_returned; /* frames lent (vnet_tx_enqueue_lent) and given back */
    /* Batches released, by how much longer than W their oldest frame was held in the driver
     * (issue 11: W holds what it says; a batch released before W, e.g. threatening the ring,
     * counts as 0): bucket i counts batches late by less than VNET_LATE_BOUNDS_US[i]
     * microseconds and at least the bound before it; the last, 1 ms or more. Received: from
     * the poll that found the batch's first frame to its delivery; sent: from the first
     * frame's enqueue to its publication, before the kick. One TSC read per batch. */
    uint64_t rx_late_hist[VNET_LATE_BUCKETS], tx_late_hist[VNET_LATE_BUCKETS];
};

/* One received frame, lent to the callback (see "Buffers" above). */
#define VNET_RX_CSUM_OK 1u /* the device vouches for its TCP/UDP checksum (see "Checksum offload") */
struct vnet_rx_frame {
    const uint8_t *data; /* Ethernet header first; the virtio-net header is stripped */
    uint32_t len;
    uint32_t flags;      /* VNET_RX_CSUM_OK or 0 */
};

/* Receives `count` >= 1 frames in arrival order. It must not call vnet_poll(), vnet_rx_flush()
 * or vnet_close() of the same device; it may call the tx functions (e.g. to answer). */
typedef void (*vnet_rx_fn)(void *arg, const struct vnet_rx_frame *frames, unsigned count);

/* One piece of a transmitted frame. */
struct vnet_iov {
    const void *base;
    size_t len;
};

/* A checksum left to the device (spec 5.1.6.2): it sums the frame from byte `start` (counted
 * from the Ethernet header) to its end and stores the result at start + offset, where the
 * driver first puts `pseudo`, the caller's folded, uncomplemented sum of the TCP/UDP pseudo
 * header (as it would lie in the packet, network byte order). */
struct vnet_tx_csum {
    uint16_t start, offset;
    uint16_t pseudo;
};

struct vnet;

/* Resets and initializes the device (spec 3.1.1), negotiating VERSION_1 (required), MAC, STATUS,
 * EVENT_IDX and, with cfg->csum_offload, CSUM and GUEST_CSUM (used when offered), sets up both virtqueues, fills the receive ring and sets
 * DRIVER_OK. cfg may be NULL (defaults). Errors: -VNET_ENODEV, -VNET_ENOTSUP, -VNET_ENOMEM,
 * -VNET_EINVAL (queue_size not a power of two or W above VNET_MAX_BATCHING_DELAY_US),
 * -VNET_EIO (device failed to reset or to accept the queues). On error nothing stays allocated
 * and the device is left reset. */
int vnet_open(struct vnet **out, const struct vnet_platform *plat, const struct vnet_config *cfg);

/* Resets the device (it stops all DMA, spec 4.1.4.3.2) and frees everything. Held transmit
 * frames are dropped (lent ones given back through the done callback), held received frames
 * are discarded. Never fails; NULL is ignored. */
void vnet_close(struct vnet *dev);

/* Appends one frame, gathered from iov[0..iovcnt), to the transmit batch (copied, see
 * "Buffers"). With W = 0 or a batch at 3/4 of the ring the batch is flushed (kicked) at once.
 * Errors: -VNET_EINVAL (iovcnt 0 or > VNET_TX_IOV_MAX, total length 0 or > VNET_MTU_FRAME),
 * -VNET_EAGAIN (no free descriptor even after reaping completions; the held batch is flushed
 * so the ring drains; counted in tx_ring_full), -VNET_EIO. */
int vnet_tx_enqueue(struct vnet *dev, const struct vnet_iov *iov, unsigned iovcnt);

/* vnet_tx_enqueue() with the frame's checksum left to the device (csum, see struct
 * vnet_tx_csum; NULL: none). Errors: those of vnet_tx_enqueue(), and -VNET_EINVAL if csum is
 * given without VNET_OFFLOAD_TX_CSUM or its field (start + offset, 2 bytes) lies outside the
 * frame. */
int vnet_tx_enqueue_csum(struct vnet *dev, const struct vnet_iov *iov, unsigned iovcnt,
                         const struct vnet_tx_csum *csum);

/* Bytes the caller leaves free before a lent frame, for the virtio-net header (VERSION_1's 12). */
#define VNET_TX_HEADROOM 12u

/* Called once per lent frame with its cookie when the driver gives it back (see "Zero-copy
 * transmit"). It must not call back into the driver. */
typedef void (*vnet_tx_done_fn)(void *arg, void *cookie);

/* Sets the callback of lent frames; before the first vnet_tx_enqueue_lent(). */
void vnet_set_tx_done(struct vnet *dev, vnet_tx_done_fn fn, void *arg);

/* Appends one lent frame, frame[0..len) at device address phys, to the transmit batch as
 * vnet_tx_enqueue_csum() would (batching, flushing and csum alike; with csum the pseudo header's
 * sum is written into the frame's checksum field). The frame, and the VNET_TX_HEADROOM bytes
 * before it, stay the device's until the done callback returns cookie (non-NULL). Errors, on
 * which nothing is lent: -VNET_EINVAL (no done callback set, cookie NULL, len 0 or above
 * VNET_MTU_FRAME, a bad csum), -VNET_EAGAIN (no free descriptor), -VNET_EIO. */
int vnet_tx_enqueue_lent(struct vnet *dev, uint8_t *frame, uint64_t phys, uint32_t len,
                         const struct vnet_tx_csum *csum, void *cookie);

/* Reaps the device's transmit completions now: their descriptors become free and lent frames
 * go back through the done callback. 0, or -VNET_EIO. */
int vnet_tx_reap(struct vnet *dev);

/* Ends one batch of the stack: hands the held frames to the device now if W = 0 or the oldest
 * has waited W µs, else leaves them for vnet_poll() by vnet_next_deadline(). Returns the number
 * of frames made visible to the device (0 if held or nothing pending), or -VNET_EIO. */
int vnet_tx_commit(struct vnet *dev);

/* Hands every held transmit frame to the device now, whatever W says (e.g. before the
 * application blocks for long, or on shutdown). Returns frames made visible, or -VNET_EIO. */
int vnet_tx_flush(struct vnet *dev);

/* Frames enqueued and not yet completed by the device (held in the batch or in flight), after
 * reaping completions: 0 means the device has sent everything, e.g. before vnet_close().
 * -VNET_EIO if BROKEN. */
int vnet_tx_outstanding(struct vnet *dev);

/* The data-path pump: turns the receive interrupt off (poll mode), reaps lent frames'
 * transmit completions if there is other work (see above), flushes a transmit batch whose time
 * has come, takes new received frames and passes them to cb(arg, ...) as the batching rules
 * above say (W = 0: each at once, one per call). Returns the number of frames passed to cb, or
 * -VNET_EIO (the device just became BROKEN). */
int vnet_poll(struct vnet *dev, vnet_rx_fn cb, void *arg);

/* Keeps the buffer of `frame`, one of the frames the rx callback is being passed now, past the
 * callback (see "Zero-copy receive"). Returns a handle >= 0 for vnet_rx_release(), or
 * -VNET_EAGAIN (every spare is kept already: copy the frame instead) or -VNET_EINVAL
 * (not a frame being delivered now, or kept already). */
int vnet_rx_keep(struct vnet *dev, const struct vnet_rx_frame *frame);

/* Gives a kept buffer back (a spare again). 0, or -VNET_EINVAL if the
 * handle is not kept (never, or released already). Allowed when BROKEN. */
int vnet_rx_release(struct vnet *dev, int handle);

/* Buffers kept now. */
unsigned vnet_rx_kept(const struct vnet *dev);

/* Condition (3) of paper 3.6 from the caller, who knows no more packets are coming (a
 * connection closed; the driver sees the other case itself, an empty poll); passes every held
 * received frame to cb now (one call). Returns the number passed, or -VNET_EIO. */
int vnet_rx_flush(struct vnet *dev, vnet_rx_fn cb, void *arg);

/* TSC value by which vnet_poll() must run again to honour W (the earliest of: oldest held tx
 * frame + W, oldest held rx frame + W); 0 if nothing is held. */
uint64_t vnet_next_deadline(const struct vnet *dev);

/* vnet_arm() results */
#define VNET_ARM_IDLE 0    /* interrupt on, nothing waiting: the caller may block */
#define VNET_ARM_BUSY 1    /* work is already waiting (frames, a held batch): poll again */
#define VNET_ARM_NO_IRQ 2  /* no interrupt available: block only until a deadline, then poll */

/* Switches to interrupt mode: enables the receive interrupt (used_event, spec 2.6.7.2: at the
 * next used entry, or while frames are held at the entry that would make the held batch
 * threaten the ring), then, after a full barrier, checks for work the device already produced.
 * Returns VNET_ARM_IDLE, VNET_ARM_BUSY or VNET_ARM_NO_IRQ (see above), or -VNET_EIO. */
int vnet_arm(struct vnet *dev);

/* Called by the device's interrupt (upcall) handler; only counts (the work happens in
 * vnet_poll(), on the caller's thread). Async-safe. With MSI-X no ISR read is needed. */
void vnet_interrupt(struct vnet *dev);

/* Sets W in µs, effective for frames held from now on (held ones keep their start time, and
 * are released by the next poll if the new W says so). -VNET_EINVAL above
 * VNET_MAX_BATCHING_DELAY_US, else 0. */
int vnet_set_batching_delay_us(struct vnet *dev, uint32_t us);
uint32_t vnet_batching_delay_us(const struct vnet *dev);

/* Copies the device's MAC address (spec 5.1.4; zero if the device offers no VIRTIO_NET_F_MAC,
 * in which case the caller picks one). */
void vnet_mac(const struct vnet *dev, uint8_t mac[6]);

/* 1 if the link is up (VIRTIO_NET_S_LINK_UP, read now; always 1 without VIRTIO_NET_F_STATUS),
 * 0 if down, -VNET_EIO if BROKEN. */
int vnet_link_up(struct vnet *dev);

/* Copies the counters. Never fails. */
void vnet_stats(const struct vnet *dev, struct vnet_stats *out);

/* Features the device and driver agreed on (spec 2.2 bit numbers), for reports. */
uint64_t vnet_features(const struct vnet *dev);

/* The checksum offloads negotiated: VNET_OFFLOAD_TX_CSUM (VIRTIO_NET_F_CSUM: the device sums
 * what vnet_tx_enqueue_csum leaves to it) and VNET_OFFLOAD_RX_CSUM (VIRTIO_NET_F_GUEST_CSUM:
 * received frames may carry VNET_RX_CSUM_OK). */
#define VNET_OFFLOAD_TX_CSUM 1u
#define VNET_OFFLOAD_RX_CSUM 2u
unsigned vnet_offloads(const struct vnet *dev);

#endif /* NOM_DRIVERS_VIRTIO_NET_H */
