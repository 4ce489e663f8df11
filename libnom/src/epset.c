/* epset.c: epoll's interest and ready lists (see epset.h). Pure code. */
#include <stdlib.h>
#include "epset.h"

/* Keys are heap pointers: their low bits say little, the multiply spreads the rest. */
static unsigned bucket(const void *key)
{
    uint64_t k = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 54) & (EPSET_BUCKETS - 1);
}

static void ready_append(struct epset_item *it)
{
    struct epset *s = it->set;
    it->ready_prev = s->ready_tail;
    it->ready_next = NULL;
    if (s->ready_tail)
        s->ready_tail->ready_next = it;
    else
        s->ready_head = it;
    s->ready_tail = it;
    it->on_ready = true;
}

static void ready_unlink(struct epset_item *it)
{
    struct epset *s = it->set;
    if (!it->on_ready)
        return;
    if (it->ready_prev)
        it->ready_prev->ready_next = it->ready_next;
    else
        s->ready_head = it->ready_next;
    if (it->ready_next)
        it->ready_next->ready_prev = it->ready_prev;
    else
        s->ready_tail = it->ready_prev;
    it->ready_prev = it->ready_next = NULL;
    it->on_ready = false;
}

struct epset_item *epset_find(const struct epset_registry *r, const struct epset *set,
                              const void *file, const void *key, int fd)
{
    for (struct epset_item *it = r->chain[bucket(key)]; it; it = it->chain)
        if (it->set == set && it->file == file && it->fd == fd)
            return it;
    return NULL;
}

struct epset_item *epset_add(struct epset_registry *r, struct epset *set, const void *file,
                             const void *key, int fd, uint32_t events, uint64_t data)
{
    struct epset_item *it = calloc(1, sizeof *it);
    if (!it)
        return NULL;
    *it = (struct epset_item){ .set = set, .file = file, .key = key, .fd = fd,
                               .events = events, .data = data };
    unsigned b = bucket(key);
    it->chain = r->chain[b];
    r->chain[b] = it;
    it->set_next = set->items;
    if (set->items)
        set->items->set_prev = it;
    set->items = it;
    set->count++;
    ready_append(it);
    return it;
}

void epset_modify(struct epset_item *it, uint32_t events, uint64_t data)
{
    it->events = events;
    it->data = data;
    it->disabled = false;
    if (!it->on_ready)
        ready_append(it);
}

void epset_remove(struct epset_registry *r, struct epset_item *it)
{
    struct epset *s = it->set;
    for (struct epset_item **pp = &r->chain[bucket(it->key)]; *pp; pp = &(*pp)->chain)
        if (*pp == it) {
            *pp = it->chain;
            break;
        }
    if (it->set_prev)
        it->set_prev->set_next = it->set_next;
    else
        s->items = it->set_next;
    if (it->set_next)
        it->set_next->set_prev = it->set_prev;
    ready_unlink(it);
    s->count--;
    free(it);
}

void epset_clear(struct epset_registry *r, struct epset *set)
{
    while (set->items)
        epset_remove(r, set->items);
}

void epset_file_gone(struct epset_registry *r, const void *file, const void *key)
{
    struct epset_item **pp = &r->chain[bucket(key)];
    while (*pp) {
        struct epset_item *it = *pp;
        if (it->file == file)
            epset_remove(r, it); /* unlinks *pp: look at the same place again */
        else
            pp = &it->chain;
    }
}

void epset_notify(struct epset_registry *r, const void *key,
                  void (*woke)(struct epset *set, void *arg), void *arg)
{
    for (struct epset_item *it = r->chain[bucket(key)]; it; it = it->chain) {
        if (it->key != key || it->disabled || it->on_ready)
            continue;
        bool first = it->set->ready_head == NULL;
        ready_append(it);
        if (first && woke)
            woke(it->set, arg);
    }
}

/* What of the file's readiness the item reports: its interest, and errors and hang-ups
 * always. 0: not ready for it. */
static uint32_t reportable(const struct epset_item *it, epset_poll_fn poll)
{
    uint32_t want = (it->events & ~(EPSET_ET | EPSET_ONESHOT)) | EPSET_ERR | EPSET_HUP;
    return poll(it) & want;
}

int epset_collect(struct epset *set, struct epset_report *out, int max, epset_poll_fn poll)
{
    int n = 0;
    /* Each candidate is looked at once: level-triggered items found ready go back to the tail
     * and must not be met again in this pass. */
    struct epset_item *last = set->ready_tail;
    for (struct epset_item *it = set->ready_head, *next; it && n < max; it = next) {
        bool final = it == last;
        next = it->ready_next;
        ready_unlink(it);
        uint32_t ev = it->disabled ? 0 : reportable(it, poll);
        if (ev) {
            out[n++] = (struct epset_report){ ev, it->data };
            if (it->events & EPSET_ONESHOT)
                it->disabled = true;
            else if (!(it->events & EPSET_ET))
                ready_append(it);
        }
        if (final)
            break;
    }
    return n;
}

bool epset_any_ready(struct epset *set, epset_poll_fn poll)
{
    for (struct epset_item *it = set->ready_head, *next; it; it = next) {
        next = it->ready_next;
        if (!it->disabled && reportable(it, poll))
            return true;
        ready_unlink(it);
    }
    return false;
}
