/* fuzz_bb.c: libFuzzer harness of libnom's bulletin-board readers (libnom/src/bb.c) and the price
 * read out of the board's slots (profit/price_slots.c), run as they run in an application: the
 * board image is mapped at NOM_BB_ADDR itself, with an unmapped page after it, so nom_bb(),
 * nom_bb_snapshot, nom_bb_find_device, nom_bb_price and nom_bb_app read the real address and an
 * overrun faults. The input: 8 query bytes (vendor, device, index, price slot, application id),
 * then the board's bytes (the rest zero; the generation made even, as the kernel leaves it
 * between writes). Checks nom/bb.h's and nom/price.h's promises: a snapshot is the board; a
 * device found is the index-th match within ndevices and the table; a row found has the id and
 * is not empty; a slot past the table is -1; the price is the first bandwidth/Gbit slot, stale
 * exactly when its NOM_PRICE_STALE flag is set. The seqlock's retry path is not reached (one
 * thread): libnom/tests/host/test_seqlock.c races it. */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <nom/bb.h>
#include <nom/price.h>

#include "expect.h"

#define BOARD_BYTES ((size_t)NOM_BB_PAGES * NOM_PAGE_SIZE)

struct query {
    uint16_t vendor, device;
    uint8_t index, slot;
    uint16_t app_id;
};

static struct nom_bb *board;

/* The board's pages at the guest's address, then a guard page (never mapped by anyone). */
static void map_board(void)
{
    void *p = mmap((void *)(uintptr_t)NOM_BB_ADDR, BOARD_BYTES + NOM_PAGE_SIZE,
                   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != (void *)(uintptr_t)NOM_BB_ADDR) {
        fprintf(stderr, "fuzz_bb: cannot map the board at %llx\n", (unsigned long long)NOM_BB_ADDR);
        exit(1);
    }
    mprotect((char *)p + BOARD_BYTES, NOM_PAGE_SIZE, PROT_NONE);
    board = p;
}

static void check_find_device(const struct query *q)
{
    struct nom_bb_device d;
    int i = nom_bb_find_device(q->vendor, q->device, q->index, &d);
    uint32_t n = board->ndevices < NOM_BB_MAX_DEVICES ? board->ndevices : NOM_BB_MAX_DEVICES;
    int matches = 0, expected = -1;
    for (uint32_t k = 0; k < n && expected < 0; k++)
        if (board->devices[k].vendor == q->vendor && board->devices[k].device == q->device &&
            matches++ == q->index)
            expected = (int)k;
    EXPECT(i == expected);
    if (i >= 0)
        EXPECT(memcmp(&d, &board->devices[i], sizeof d) == 0);
}

static void check_app_and_price(const struct query *q)
{
    struct nom_bb_app a;
    if (nom_bb_app(q->app_id, &a) == 0)
        EXPECT(a.id == q->app_id && a.state != NOM_APP_EMPTY);
    struct nom_bb_price p;
    int r = nom_bb_price(q->slot, &p);
    EXPECT(r == (q->slot < NOM_BB_MAX_PRICES ? 0 : -1));
    if (r == 0)
        EXPECT(memcmp(&p, &board->prices[q->slot], sizeof p) == 0);
    struct nom_price price;
    r = nom_price_from_slots(board->prices, NOM_BB_MAX_PRICES, &price);
    const struct nom_bb_price *first = NULL;
    for (unsigned k = 0; k < NOM_BB_MAX_PRICES && !first; k++)
        if (board->prices[k].resource == NOM_RES_BANDWIDTH && board->prices[k].unit == NOM_UNIT_GBIT)
            first = &board->prices[k];
    EXPECT(r == (first ? 0 : -ENOENT));
    if (first)
        EXPECT(price.micro_per_gbit == first->price_micro && price.sequence == first->sequence &&
               price.timestamp_ns == first->timestamp_ns &&
               price.stale == ((first->flags & NOM_PRICE_STALE) != 0) &&
               price.stale_since_tsc == (price.stale ? first->stale_since_tsc : 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!board)
        map_board();
    struct query q = {0};
    memcpy(&q, data, size < sizeof q ? size : sizeof q);
    size_t skip = size < sizeof q ? size : sizeof q, n = size - skip;
    memset(board, 0, BOARD_BYTES);
    memcpy(board, data + skip, n < sizeof *board ? n : sizeof *board);
    board->generation &= ~1ull;

    static struct nom_bb copy;
    EXPECT(nom_bb_snapshot(&copy) == board->generation);
    EXPECT(memcmp(&copy, board, sizeof copy) == 0);
    check_find_device(&q);
    check_app_and_price(&q);
    return 0;
}
