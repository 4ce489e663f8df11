/* test_seqlock.c: the bulletin-board reader (src/bb.c, nom_bb_snapshot_from) against a writer
 * thread that follows the kernel's protocol (odd generation while writing). A torn copy would
 * mix two writes' values. */
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include <nom/bb.h>

static struct nom_bb board;
static atomic_int writes_left;

/* Every write fills the whole board (past the header) with one byte value. Writes are spaced
 * a little, as the kernel's are, so that readers make progress between them. */
static void *writer(void *arg)
{
    (void)arg;
    unsigned char v = 0;
    while (atomic_fetch_sub(&writes_left, 1) > 0) {
        usleep(20);
        board.generation++;
        atomic_thread_fence(memory_order_seq_cst);
        v++;
        memset(&board.tsc_hz, v, sizeof board - offsetof(struct nom_bb, tsc_hz));
        atomic_thread_fence(memory_order_seq_cst);
        board.generation++;
    }
    return NULL;
}

static int snapshots_are_never_torn(void)
{
    static struct nom_bb snap;
    pthread_t w;
    board.magic = NOM_BB_MAGIC;
    atomic_store(&writes_left, 5000);
    pthread_create(&w, NULL, writer, NULL);
    int torn = 0, odd = 0, copies = 0;
    while (atomic_load(&writes_left) > 0) {
        copies++;
        uint64_t g = nom_bb_snapshot_from(&board, &snap);
        odd += g & 1;
        const unsigned char *p = (const unsigned char *)&snap.tsc_hz;
        size_t n = sizeof snap - offsetof(struct nom_bb, tsc_hz);
        for (size_t k = 1; k < n; k++)
            if (p[k] != p[0]) {
                torn++;
                break;
            }
    }
    pthread_join(w, NULL);
    CHECK(copies > 100 && torn == 0 && odd == 0);
    return 1;
}

static int quiet_board_copies_at_once(void)
{
    static struct nom_bb snap;
    board.generation = 42;
    board.ncpus = 3;
    CHECK(nom_bb_snapshot_from(&board, &snap) == 42 && snap.ncpus == 3);
    return 1;
}

int main(void)
{
    RUN(snapshots_are_never_torn);
    RUN(quiet_board_copies_at_once);
    return failures != 0;
}
