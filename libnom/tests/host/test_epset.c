/* test_epset.c: epoll's interest and ready lists (src/epset.c): level-triggered, edge-triggered
 * and one-shot reports, errors whatever the interest, ready files taking turns, a file's event
 * reaching only its own items, and items leaving with their file or set. */
#include "check.h"
#include "epset.h"

/* A watched file: its readiness, and how often it was asked. */
struct fake_file {
    uint32_t ready;
    int polls;
};

static uint32_t fake_poll(const struct epset_item *it)
{
    struct fake_file *f = (struct fake_file *)it->file;
    f->polls++;
    return f->ready;
}

static int woken[4];
static void count_woke(struct epset *set, void *arg)
{
    struct epset *sets = arg;
    woken[set - sets]++;
}

static struct epset_item *add(struct epset_registry *r, struct epset *s, struct fake_file *f,
                              int fd, uint32_t events)
{
    struct epset_item *it = epset_add(r, s, f, f, fd, events, (uint64_t)fd * 100);
    CHECK(it != NULL);
    return it;
}

static int level_triggered_reports_while_ready(void)
{
    static struct epset_registry r;
    struct epset s = {0};
    struct fake_file a = {EPSET_IN, 0}, b = {0, 0};
    struct epset_report out[4];
    add(&r, &s, &a, 3, EPSET_IN);
    add(&r, &s, &b, 4, EPSET_IN);
    /* Both were candidates at ADD; only a is ready. */
    CHECK(epset_collect(&s, out, 4, fake_poll) == 1 && out[0].data == 300 &&
          out[0].events == EPSET_IN);
    CHECK(epset_collect(&s, out, 4, fake_poll) == 1 && out[0].data == 300); /* still ready */
    CHECK(b.polls == 1); /* b left the list when found not ready, and was not asked again */
    a.ready = 0;
    CHECK(epset_collect(&s, out, 4, fake_poll) == 0);
    CHECK(s.ready_head == NULL);
    b.ready = EPSET_IN; /* b's readiness changed, but nobody said so: not seen */
    CHECK(epset_collect(&s, out, 4, fake_poll) == 0);
    epset_notify(&r, &b, NULL, NULL);
    CHECK(epset_collect(&s, out, 4, fake_poll) == 1 && out[0].data == 400);
    epset_clear(&r, &s);
    CHECK(s.count == 0 && s.items == NULL && s.ready_head == NULL);
    return 1;
}

static int interest_filters_but_errors_always_report(void)
{
    static struct epset_registry r;
    struct epset s = {0};
    struct fake_file f = {EPSET_IN | EPSET_OUT, 0};
    struct epset_report out[2];
    struct epset_item *it = add(&r, &s, &f, 5, EPSET_OUT);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 1 && out[0].events == EPSET_OUT);
    epset_modify(it, 0, 7); /* no interest: quiet while readable and writable */
    CHECK(epset_collect(&s, out, 2, fake_poll) == 0);
    f.ready = EPSET_IN | EPSET_HUP | EPSET_ERR;
    epset_notify(&r, &f, NULL, NULL);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 1 && out[0].events == (EPSET_HUP | EPSET_ERR) &&
          out[0].data == 7);
    epset_clear(&r, &s);
    return 1;
}

static int edge_triggered_reports_once_per_event(void)
{
    static struct epset_registry r;
    struct epset s = {0};
    struct fake_file f = {EPSET_IN, 0};
    struct epset_report out[2];
    add(&r, &s, &f, 6, EPSET_IN | EPSET_ET);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 1 && out[0].events == EPSET_IN);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 0); /* still readable: no new event */
    epset_notify(&r, &f, NULL, NULL);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 1);
    epset_clear(&r, &s);
    return 1;
}

static int one_shot_waits_for_modify(void)
{
    static struct epset_registry r;
    struct epset s = {0};
    struct fake_file f = {EPSET_IN, 0};
    struct epset_report out[2];
    struct epset_item *it = add(&r, &s, &f, 7, EPSET_IN | EPSET_ONESHOT);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 1);
    epset_notify(&r, &f, NULL, NULL);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 0); /* disabled until modified */
    CHECK(epset_any_ready(&s, fake_poll) == false);
    epset_modify(it, EPSET_IN | EPSET_ONESHOT, 8);
    CHECK(epset_any_ready(&s, fake_poll));
    CHECK(epset_collect(&s, out, 2, fake_poll) == 1 && out[0].data == 8);
    epset_clear(&r, &s);
    return 1;
}

/* More ready files than one call takes: the next call starts with those left over. */
static int ready_files_take_turns(void)
{
    static struct epset_registry r;
    struct epset s = {0};
    struct fake_file f[3] = {{EPSET_IN, 0}, {EPSET_IN, 0}, {EPSET_IN, 0}};
    struct epset_report out[2];
    for (int i = 0; i < 3; i++)
        add(&r, &s, &f[i], i, EPSET_IN);
    /* Items are candidates in the order added. */
    CHECK(epset_collect(&s, out, 2, fake_poll) == 2 && out[0].data == 0 && out[1].data == 100);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 2 && out[0].data == 200 && out[1].data == 0);
    CHECK(epset_collect(&s, out, 2, fake_poll) == 2 && out[0].data == 100 && out[1].data == 200);
    epset_clear(&r, &s);
    return 1;
}

/* An event asks only the items of its own file, however many others are registered, and wakes
 * each set that gained a candidate once. */
static int an_event_reaches_only_its_files_items(void)
{
    static struct epset_registry r;
    static struct fake_file files[4096];
    struct epset sets[2] = {{0}, {0}};
    struct epset_report out[8];
    for (int i = 0; i < 4096; i++)
        add(&r, &sets[i & 1], &files[i], i, EPSET_IN);
    CHECK(epset_collect(&sets[0], out, 8, fake_poll) == 0 &&
          epset_collect(&sets[1], out, 8, fake_poll) == 0);
    for (int i = 0; i < 4096; i++)
        files[i].polls = 0;
    /* One file watched by both sets, under two descriptors (a dup) in set 1. */
    struct fake_file shared = {0, 0};
    add(&r, &sets[0], &shared, 5000, EPSET_IN);
    add(&r, &sets[1], &shared, 5001, EPSET_IN);
    add(&r, &sets[1], &shared, 5002, EPSET_IN);
    CHECK(epset_find(&r, &sets[1], &shared, &shared, 5002) != NULL);
    CHECK(epset_find(&r, &sets[0], &shared, &shared, 5002) == NULL);
    CHECK(epset_collect(&sets[0], out, 8, fake_poll) == 0 &&
          epset_collect(&sets[1], out, 8, fake_poll) == 0);
    shared.ready = EPSET_IN;
    files[77].ready = EPSET_IN; /* ready, but no event said so */
    woken[0] = woken[1] = 0;
    epset_notify(&r, &shared, count_woke, sets);
    CHECK(woken[0] == 1 && woken[1] == 1);
    CHECK(epset_collect(&sets[0], out, 8, fake_poll) == 1 && out[0].data == 500000);
    CHECK(epset_collect(&sets[1], out, 8, fake_poll) == 2);
    int asked = 0;
    for (int i = 0; i < 4096; i++)
        asked += files[i].polls;
    CHECK(asked == 0);
    epset_clear(&r, &sets[0]);
    epset_clear(&r, &sets[1]);
    return 1;
}

/* A file closed for good leaves every set; its later events find nothing. */
static int a_gone_file_leaves_every_set(void)
{
    static struct epset_registry r;
    struct epset s1 = {0}, s2 = {0};
    struct fake_file f = {EPSET_IN, 0}, g = {EPSET_IN, 0};
    struct epset_report out[4];
    add(&r, &s1, &f, 1, EPSET_IN);
    add(&r, &s2, &f, 1, EPSET_IN);
    add(&r, &s2, &g, 2, EPSET_IN);
    epset_file_gone(&r, &f, &f);
    CHECK(s1.count == 0 && s1.ready_head == NULL && s2.count == 1);
    CHECK(epset_find(&r, &s2, &f, &f, 1) == NULL);
    epset_notify(&r, &f, NULL, NULL);
    CHECK(epset_collect(&s1, out, 4, fake_poll) == 0);
    CHECK(epset_collect(&s2, out, 4, fake_poll) == 1 && out[0].data == 200);
    struct epset_item *it = epset_find(&r, &s2, &g, &g, 2);
    CHECK(it != NULL);
    epset_remove(&r, it);
    CHECK(s2.count == 0 && s2.items == NULL && s2.ready_head == NULL && s2.ready_tail == NULL);
    for (unsigned b = 0; b < EPSET_BUCKETS; b++)
        CHECK(r.chain[b] == NULL);
    return 1;
}

int main(void)
{
    RUN(level_triggered_reports_while_ready);
    RUN(interest_filters_but_errors_always_report);
    RUN(edge_triggered_reports_once_per_event);
    RUN(one_shot_waits_for_modify);
    RUN(ready_files_take_turns);
    RUN(an_event_reaches_only_its_files_items);
    RUN(a_gone_file_leaves_every_set);
    return failures != 0;
}
