/* bb.c: bulletin-board readers through the kernel's seqlock (abi.h struct nom_bb). The copy
 * and the retry are pure code (nom_bb_snapshot_from), unit-tested on the host. */
#include <string.h>
#include <nom/bb.h>

const volatile struct nom_bb *nom_bb(void)
{
    return (const volatile struct nom_bb *)(uintptr_t)NOM_BB_ADDR;
}

static inline void read_barrier(void)
{
    /* x86 keeps loads ordered; this stops the compiler from moving them across. */
    __asm__ volatile("" ::: "memory");
}

/* The reader side of a seqlock: copy between two reads of an even, unchanged generation. */
static uint64_t seq_copy(const volatile struct nom_bb *bb, const volatile void *src, void *dst,
                         size_t n)
{
    for (;;) {
        uint64_t g1 = bb->generation;
        read_barrier();
        if (g1 & 1) {
            __builtin_ia32_pause();
            continue;
        }
        memcpy(dst, (const void *)src, n);
        read_barrier();
        if (bb->generation == g1)
            return g1;
    }
}

uint64_t nom_bb_snapshot_from(const volatile struct nom_bb *bb, struct nom_bb *out)
{
    return seq_copy(bb, bb, out, sizeof *out);
}

uint64_t nom_bb_snapshot(struct nom_bb *out)
{
    return nom_bb_snapshot_from(nom_bb(), out);
}

int nom_bb_find_device(uint16_t vendor, uint16_t device, int index, struct nom_bb_device *out)
{
    const volatile struct nom_bb *bb = nom_bb();
    struct nom_bb_device d;
    uint32_t n;
    seq_copy(bb, &bb->ndevices, &n, sizeof n);
    for (uint32_t i = 0; i < n && i < NOM_BB_MAX_DEVICES; i++) {
        seq_copy(bb, &bb->devices[i], &d, sizeof d);
        if (d.vendor == vendor && d.device == device && index-- == 0) {
            if (out)
                *out = d;
            return (int)i;
        }
    }
    return -1;
}

int nom_bb_price(unsigned slot, struct nom_bb_price *out)
{
    if (slot >= NOM_BB_MAX_PRICES)
        return -1;
    seq_copy(nom_bb(), &nom_bb()->prices[slot], out, sizeof *out);
    return 0;
}

int nom_bb_app(uint32_t app_id, struct nom_bb_app *out)
{
    const volatile struct nom_bb *bb = nom_bb();
    for (uint32_t i = 0; i < NOM_BB_MAX_APPS; i++) {
        seq_copy(bb, &bb->apps[i], out, sizeof *out);
        if (out->id == app_id && out->state != NOM_APP_EMPTY)
            return 0;
    }
    return -1;
}
