/* timerheap.c: the scheduler's timer min-heap (see timerheap.h). Pure code. */
#include "timerheap.h"

static void place(struct nom_timerheap *h, size_t i, struct nom_timer *t)
{
    h->slots[i] = t;
    t->heap_slot = i;
}

static void sift_up(struct nom_timerheap *h, size_t i)
{
    struct nom_timer *t = h->slots[i];
    while (i > 1 && h->slots[i / 2]->deadline > t->deadline) {
        place(h, i, h->slots[i / 2]);
        i /= 2;
    }
    place(h, i, t);
}

static void sift_down(struct nom_timerheap *h, size_t i)
{
    struct nom_timer *t = h->slots[i];
    for (;;) {
        size_t c = 2 * i;
        if (c > h->len)
            break;
        if (c + 1 <= h->len && h->slots[c + 1]->deadline < h->slots[c]->deadline)
            c++;
        if (h->slots[c]->deadline >= t->deadline)
            break;
        place(h, i, h->slots[c]);
        i = c;
    }
    place(h, i, t);
}

int timerheap_insert(struct nom_timerheap *h, struct nom_timer *t)
{
    if (h->len + 2 > h->cap && h->grow(h, h->len + 2) != 0)
        return -1;
    h->len++;
    place(h, h->len, t);
    sift_up(h, h->len);
    return 0;
}

int timerheap_remove(struct nom_timerheap *h, struct nom_timer *t)
{
    size_t i = t->heap_slot;
    if (i == 0 || i > h->len || h->slots[i] != t)
        return 0;
    struct nom_timer *last = h->slots[h->len--];
    t->heap_slot = 0;
    if (last != t) {
        place(h, i, last);
        sift_up(h, i);
        sift_down(h, last->heap_slot);
    }
    return 1;
}

