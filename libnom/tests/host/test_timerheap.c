/* test_timerheap.c: the scheduler's timer heap (src/timerheap.c) against a brute-force model. */
#include <stdlib.h>
#include "check.h"
#include "timerheap.h"

static int grows;

static int grow(struct nom_timerheap *h, size_t need)
{
    size_t cap = need * 2;
    struct nom_timer **s = realloc(h->slots, cap * sizeof *s);
    if (!s)
        return -1;
    h->slots = s;
    h->cap = cap;
    grows++;
    return 0;
}

static void noop(void *arg) { (void)arg; }

static int expired_timers_come_out_in_deadline_order(void)
{
    struct nom_timerheap h = { NULL, 0, 0, grow };
    static struct nom_timer t[500];
    srand(1);
    for (int i = 0; i < 500; i++) {
        t[i] = (struct nom_timer){ (uint64_t)(rand() % 100000), noop, NULL, 0 };
        CHECK(timerheap_insert(&h, &t[i]) == 0 && t[i].heap_slot != 0);
    }
    CHECK(grows > 1);
    uint64_t last = 0;
    size_t n = 0;
    struct nom_timer *x;
    while ((x = timerheap_pop_expired(&h, 50000)) != NULL) {
        CHECK(x->deadline >= last && x->deadline <= 50000 && x->heap_slot == 0);
        last = x->deadline;
        n++;
    }
    CHECK(timerheap_min(&h) == NULL || timerheap_min(&h)->deadline > 50000);
    size_t model = 0;
    for (int i = 0; i < 500; i++)
        model += t[i].deadline <= 50000;
    CHECK(n == model && h.len == 500 - model);
    free(h.slots);
    return 1;
}

static int cancel_removes_exactly_that_timer(void)
{
    struct nom_timerheap h = { NULL, 0, 0, grow };
    static struct nom_timer t[200];
    for (int i = 0; i < 200; i++) {
        t[i] = (struct nom_timer){ (uint64_t)((i * 7919) % 1000), noop, NULL, 0 };
        timerheap_insert(&h, &t[i]);
    }
    for (int i = 0; i < 200; i += 3)
        CHECK(timerheap_remove(&h, &t[i]) == 1 && t[i].heap_slot == 0);
    CHECK(timerheap_remove(&h, &t[0]) == 0); /* second cancel: not armed */
    int seen[200] = { 0 };
    uint64_t last = 0;
    struct nom_timer *x;
    while ((x = timerheap_pop_expired(&h, UINT64_MAX)) != NULL) {
        CHECK(x->deadline >= last);
        last = x->deadline;
        seen[x - t]++;
    }
    for (int i = 0; i < 200; i++)
        CHECK(seen[i] == (i % 3 != 0));
    free(h.slots);
    return 1;
}

static int rearming_moves_a_timer(void)
{
    struct nom_timerheap h = { NULL, 0, 0, grow };
    struct nom_timer a = { 10, noop, NULL, 0 }, b = { 20, noop, NULL, 0 };
    timerheap_insert(&h, &a);
    timerheap_insert(&h, &b);
    CHECK(timerheap_min(&h) == &a);
    timerheap_remove(&h, &a);
    a.deadline = 30;
    timerheap_insert(&h, &a);
    CHECK(timerheap_min(&h) == &b);
    CHECK(timerheap_pop_expired(&h, 25) == &b && timerheap_pop_expired(&h, 25) == NULL);
    CHECK(timerheap_pop_expired(&h, 30) == &a && h.len == 0);
    free(h.slots);
    return 1;
}

static int refuse(struct nom_timerheap *hh, size_t need)
{
    (void)hh, (void)need;
    return -1;
}

static int failed_growth_is_reported(void)
{
    struct nom_timerheap h = { NULL, 0, 0, refuse };
    struct nom_timer a = { 1, noop, NULL, 0 };
    CHECK(timerheap_insert(&h, &a) == -1 && a.heap_slot == 0 && h.len == 0);
    return 1;
}

int main(void)
{
    RUN(expired_timers_come_out_in_deadline_order);
    RUN(cancel_removes_exactly_that_timer);
    RUN(rearming_moves_a_timer);
    RUN(failed_growth_is_reported);
    return failures != 0;
}
