/* test_runq.c: the run queue (src/runq.h): FIFO order, emptiness, re-queueing. */
#include "check.h"
#include "runq.h"

static struct nom_runq_link items[8];

static int fifo_order_is_kept(void)
{
    struct nom_runq q = { 0 };
    for (int i = 0; i < 8; i++)
        runq_push(&q, &items[i]);
    CHECK(q.len == 8);
    for (int i = 0; i < 8; i++)
        CHECK(runq_pop(&q) == &items[i]);
    CHECK(runq_empty(&q) && q.len == 0 && q.tail == NULL);
    return 1;
}

static int empty_queue_pops_null(void)
{
    struct nom_runq q = { 0 };
    CHECK(runq_pop(&q) == NULL && runq_empty(&q));
    runq_push(&q, &items[0]);
    CHECK(!runq_empty(&q));
    CHECK(runq_pop(&q) == &items[0] && runq_pop(&q) == NULL);
    return 1;
}

static int requeued_item_goes_to_the_back(void)
{
    struct nom_runq q = { 0 };
    runq_push(&q, &items[0]);
    runq_push(&q, &items[1]);
    struct nom_runq_link *l = runq_pop(&q);
    runq_push(&q, l); /* a thread that yields */
    CHECK(runq_pop(&q) == &items[1] && runq_pop(&q) == &items[0] && runq_empty(&q));
    return 1;
}

static int interleaved_push_pop_stays_consistent(void)
{
    struct nom_runq q = { 0 };
    int next_in = 0, next_out = 0;
    for (int round = 0; round < 1000; round++) {
        if (round % 3 != 2 && next_in - next_out < 8) {
            runq_push(&q, &items[next_in % 8]);
            next_in++;
        } else if (next_out < next_in) {
            CHECK(runq_pop(&q) == &items[next_out % 8]);
            next_out++;
        }
        CHECK(q.len == (size_t)(next_in - next_out));
    }
    return 1;
}

int main(void)
{
    RUN(fifo_order_is_kept);
    RUN(empty_queue_pops_null);
    RUN(requeued_item_goes_to_the_back);
    RUN(interleaved_push_pop_stays_consistent);
    return failures != 0;
}
