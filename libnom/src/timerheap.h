/*
 * timerheap.h: a binary min-heap of struct nom_timer by deadline (pure code, unit-tested on
 * the host). Each timer records its slot (1-based; 0 = not in the heap), so cancel and
 * re-arm are O(log n) without searching. The heap never allocates: the caller provides slot
 * storage and grows it through the grow callback (libnom maps pages of a reserved region, so
 * that adding a timer never calls malloc from scheduler context).
 */
#ifndef NOM_TIMERHEAP_H
#define NOM_TIMERHEAP_H

#include <stddef.h>
#include <stdint.h>
#include <nom/sched.h>

struct nom_timerheap {
    struct nom_timer **slots; /* slots[1..len]; slots[0] unused */
    size_t len, cap;          /* cap counts usable slots including slot 0 */
    /* Makes room for at least need slots; returns 0 or -1 (no memory). */
    int (*grow)(struct nom_timerheap *h, size_t need);
};

/* Inserts t (t->deadline set); 0, or -1 if the heap cannot grow. t must not be in a heap. */
int timerheap_insert(struct nom_timerheap *h, struct nom_timer *t);
/* Removes t if it is in the heap; returns 1 if it was. */
int timerheap_remove(struct nom_timerheap *h, struct nom_timer *t);
/* The earliest timer, or NULL. Inline, as the next: the scheduler asks at every pass and
 * every idle turn, and the answer is usually "none due" (issue 16). */
static inline struct nom_timer *timerheap_min(const struct nom_timerheap *h)
{
    return h->len ? h->slots[1] : NULL;
}
/* Removes and returns the earliest timer whose deadline <= now, or NULL. */
static inline struct nom_timer *timerheap_pop_expired(struct nom_timerheap *h, uint64_t now)
{
    struct nom_timer *t = timerheap_min(h);
    if (!t || t->deadline > now)
        return NULL;
    timerheap_remove(h, t);
    return t;
}

#endif /* NOM_TIMERHEAP_H */
