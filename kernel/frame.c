/* frame.c: the physical frame allocator, a bitmap over every 4 KiB frame below MAX_PHYS.
 * Pure code (host unit tests in tests/): the only outside call is frame_zero(). Frames are
 * handed out lowest first, so early page tables land in the first GiB, which boot.S maps. */
#include "frame.h"

static uint64_t bitmap[FRAME_MAX / 64]; /* bit set: frame in use or not RAM */
static uint64_t nframes, nfree, ntotal, hint;

static bool used(uint64_t f) { return bitmap[f / 64] & (1ull << (f % 64)); }
static void set_used(uint64_t f) { bitmap[f / 64] |= 1ull << (f % 64); }
static void set_free(uint64_t f) { bitmap[f / 64] &= ~(1ull << (f % 64)); }

void frame_init(uint64_t max_phys) {
    nframes = max_phys / FRAME_SIZE;
    if (nframes > FRAME_MAX)
        nframes = FRAME_MAX;
    for (uint64_t i = 0; i < FRAME_MAX / 64; i++)
        bitmap[i] = ~0ull;
    nfree = ntotal = hint = 0;
}

/* Marks [start, end) free; partial frames at the edges stay used. */
void frame_free_range(uint64_t start, uint64_t end) {
    uint64_t f = (start + FRAME_SIZE - 1) / FRAME_SIZE, last = end / FRAME_SIZE;
    for (; f < last && f < nframes; f++) {
        if (used(f)) {
            set_free(f);
            nfree++;
            ntotal++;
        }
    }
}

/* Marks every frame touching [start, end) used (not counted as free any more). */
void frame_reserve_range(uint64_t start, uint64_t end) {
    for (uint64_t f = start / FRAME_SIZE; f * FRAME_SIZE < end && f < nframes; f++) {
        if (!used(f)) {
            set_used(f);
            nfree--;
            ntotal--;
        }
    }
}

uint64_t frame_alloc(void) {
    for (uint64_t n = 0; n < nframes; n++) {
        uint64_t f = (hint + n) % nframes;
        if (bitmap[f / 64] == ~0ull) {
            n += 63 - f % 64; /* skip a full word */
            continue;
        }
        if (!used(f)) {
            set_used(f);
            nfree--;
            hint = f + 1;
            frame_zero(f * FRAME_SIZE, 1);
            return f * FRAME_SIZE;
        }
    }
    return 0;
}

/* First fit of n contiguous frames, searched from the bottom. */
uint64_t frame_alloc_contig(uint64_t n) {
    if (n == 0)
        return 0;
    uint64_t run = 0;
    for (uint64_t f = 1; f < nframes; f++) {
        run = used(f) ? 0 : run + 1;
        if (run == n) {
            uint64_t first = f + 1 - n;
            for (uint64_t i = first; i <= f; i++)
                set_used(i);
            nfree -= n;
            frame_zero(first * FRAME_SIZE, n);
            return first * FRAME_SIZE;
        }
    }
    return 0;
}

void frame_free(uint64_t pa) {
    uint64_t f = pa / FRAME_SIZE;
    if (pa % FRAME_SIZE || f == 0 || f >= nframes || !used(f))
        frame_bug("frame_free of a bad frame", pa);
    set_free(f);
    nfree++;
    if (f < hint)
        hint = f;
}

void frame_free_contig(uint64_t pa, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        frame_free(pa + i * FRAME_SIZE);
}

uint64_t frame_count_free(void) { return nfree; }
uint64_t frame_count_total(void) { return ntotal; }
